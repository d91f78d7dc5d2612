import crypto from 'node:crypto';
import { compactVerify, createLocalJWKSet, type JSONWebKeySet } from 'jose';

/**
 * Checking a daily digest (docs/event-proofs.md, "Daily digest"): its signature against the
 * service's published keys, and its root against the events you hold. Needs `jose` and Node's
 * crypto; written apart from the service's own code on purpose.
 *
 *   const jwks = await (await fetch('https://billing.example.com/.well-known/jwks.json')).json();
 *   const digest = await (await fetch(`${api}/digests/2026-11-27`, { headers })).json();
 *   await verifyDigest(digest, jwks);                  // throws when the signature does not hold
 *   digest.root === digestRoot(headsOfDay(events, '2026-11-27'));
 */

export interface Digest {
  date: string;
  tenant_id: string;
  events: number;
  root: string;
  signature: string;
}

/** The signature holds for the published keys and signs exactly this digest. */
export async function verifyDigest(digest: Digest, jwks: JSONWebKeySet): Promise<void> {
  const { payload, protectedHeader } = await compactVerify(digest.signature, createLocalJWKSet(jwks));
  if (protectedHeader.alg !== 'EdDSA') throw new Error(`unexpected alg ${protectedHeader.alg}`);
  const signed = JSON.parse(new TextDecoder().decode(payload));
  const { signature: _signature, ...rest } = digest;
  if (JSON.stringify(signed) !== JSON.stringify(rest)) throw new Error('the signature is over another digest');
}

const sha = (...parts: Buffer[]) => crypto.createHash('sha256').update(Buffer.concat(parts)).digest();

/** RFC 6962 Merkle Tree Hash over the heads (hex), sorted. */
export function digestRoot(heads: string[]): string {
  const leaves = [...heads].sort().map((h) => Buffer.from(h, 'hex'));
  const mth = (d: Buffer[]): Buffer => {
    if (d.length === 0) return sha();
    if (d.length === 1) return sha(Buffer.from([0]), d[0]);
    let k = 1;
    while (k * 2 < d.length) k *= 2;
    return sha(Buffer.from([1]), mth(d.slice(0, k)), mth(d.slice(k)));
  };
  return mth(leaves).toString('hex');
}

/** An event as the export's `events` table has it (the fields this needs). */
export interface ExportedEvent {
  chain: string | null;
  sequence: number | bigint | null;
  hash: string | null;
  created_at: Date | string;
}

/** Each chain's last hash among the events recorded on `day` (UTC), and how many there were. */
export function headsOfDay(events: ExportedEvent[], day: string): { heads: string[]; events: number } {
  const last = new Map<string, { sequence: number; hash: string }>();
  let n = 0;
  for (const e of events) {
    if (!e.chain || e.sequence === null || !e.hash) continue;
    if (new Date(e.created_at).toISOString().slice(0, 10) !== day) continue;
    n++;
    const seq = Number(e.sequence);
    const held = last.get(e.chain);
    if (!held || seq > held.sequence) last.set(e.chain, { sequence: seq, hash: e.hash });
  }
  return { heads: [...last.values()].map((h) => h.hash), events: n };
}
