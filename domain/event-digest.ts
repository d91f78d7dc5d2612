/**
 * The daily digest's root (docs/event-proofs.md, "Daily digest"): the RFC 6962 Merkle Tree Hash
 * over the day's chain heads — for each app user with events recorded that day (UTC), the `hash` of
 * their last one that day — sorted ascending as hex. A leaf is SHA-256(0x00 ‖ the head's 32 bytes),
 * a node SHA-256(0x01 ‖ left ‖ right), the split at the largest power of two below the count; no
 * heads: SHA-256 of nothing. Pure: the SHA-256 is given by the caller.
 */
export type Sha256 = (bytes: Uint8Array) => Uint8Array;

const hexToBytes = (hex: string): Uint8Array => {
  if (!/^[0-9a-f]{64}$/.test(hex)) throw new Error(`event digest: a head must be 64 hex digits, got ${hex}`);
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
};
const bytesToHex = (b: Uint8Array): string => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');

const concat = (...parts: Uint8Array[]): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

function mth(leaves: Uint8Array[], sha256: Sha256): Uint8Array {
  if (leaves.length === 0) return sha256(new Uint8Array(0));
  if (leaves.length === 1) return sha256(concat(Uint8Array.of(0), leaves[0]));
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return sha256(concat(Uint8Array.of(1), mth(leaves.slice(0, k), sha256), mth(leaves.slice(k), sha256)));
}

/** The root (hex) over the heads, in any order given: they are sorted here. */
export function digestRoot(heads: readonly string[], sha256: Sha256): string {
  const sorted = [...heads].sort();
  return bytesToHex(mth(sorted.map(hexToBytes), sha256));
}

/** What the signature covers: the digest without `signature`, these fields in this order. */
export interface DigestPayload {
  date: string;
  tenant_id: string;
  events: number;
  root: string;
}

/** The `typ` of a digest's JWS header. */
export const DIGEST_JWS_TYPE = 'event-digest+jws';

/** A day as the digest names it: `YYYY-MM-DD` (UTC), a real calendar date. */
export function isDigestDate(s: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(s)) return false;
  const d = new Date(`${s}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s;
}

/** The UTC day before the instant `nowMs`. */
export function previousDay(nowMs: number): string {
  return new Date(nowMs - 86_400_000).toISOString().slice(0, 10);
}
