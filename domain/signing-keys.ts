/**
 * The deployment's signing keys (docs/entitlement-tokens.md, "Keys"): what signs entitlement
 * tokens and the daily digests, and what is published at `/.well-known/jwks.json`.
 *
 * - `active`: the one key that signs. Exactly one at a time.
 * - `retired`: signs nothing more; stays published while anything it signed can still be checked.
 * - `withdrawn`: compromised; unpublished at once, whatever it signed stops verifying.
 */

export const SIGNING_KEY_STATES = ['active', 'retired', 'withdrawn'] as const;
export type SigningKeyState = (typeof SIGNING_KEY_STATES)[number];

export interface SigningKeyFacts {
  kid: string;
  state: SigningKeyState;
  created_at: Date;
  retired_at: Date | null;
}

/** How long what a key signed can still be checked after it signed it. */
export interface Retention {
  /** A token's longest life (`exp` - `iat`). */
  tokenMs: number;
  /** How long a signed digest is served after it was signed (0: nothing else is signed; Infinity: for ever). */
  digestMs: number;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** A token never lives longer than this (the contract: `exp` at most 24 h after `iat`). */
export const TOKEN_MAX_LIFETIME_MS = 24 * HOUR_MS;

/** The rotation schedule: a key signs for this long, then a new one takes over. */
export const ROTATION_INTERVAL_MS = 30 * DAY_MS;

/** Tokens only; the proofs' digests pass their own serving time. */
export const TOKENS_ONLY: Retention = { tokenMs: TOKEN_MAX_LIFETIME_MS, digestMs: 0 };

/** Tokens and the daily digests, which are stored and served for ever (docs/event-proofs.md). */
export const TOKENS_AND_DIGESTS: Retention = { tokenMs: TOKEN_MAX_LIFETIME_MS, digestMs: Infinity };

/** The key that signs now: the newest active one (the store keeps at most one). Null: none yet. */
export function signerOf<K extends SigningKeyFacts>(keys: readonly K[]): K | null {
  let best: K | null = null;
  for (const k of keys) if (k.state === 'active' && (!best || k.created_at > best.created_at)) best = k;
  return best;
}

/** Until when a key is published: forever while active; after retirement, while what it signed can be checked. */
export function publishedUntil(key: SigningKeyFacts, retention: Retention): Date | null {
  if (key.state === 'withdrawn') return new Date(0);
  const keep = Math.max(retention.tokenMs, retention.digestMs);
  // Digests served for ever keep their key published for ever.
  if (key.state === 'active' || !key.retired_at || !Number.isFinite(keep)) return null;
  return new Date(key.retired_at.getTime() + keep);
}

export function isPublished(key: SigningKeyFacts, now: Date, retention: Retention): boolean {
  const until = publishedUntil(key, retention);
  return until === null || now < until;
}

/** The keys of the JWKS, newest first (a verifier tries them by `kid` anyway). */
export function publishedKeys<K extends SigningKeyFacts>(keys: readonly K[], now: Date, retention: Retention): K[] {
  return keys
    .filter((k) => isPublished(k, now, retention))
    .sort((a, b) => b.created_at.getTime() - a.created_at.getTime());
}

/** Whether the scheduled rotation replaces the signer now (none yet counts as due). */
export function rotationDue(signer: SigningKeyFacts | null, now: Date, intervalMs = ROTATION_INTERVAL_MS): boolean {
  return !signer || now.getTime() - signer.created_at.getTime() >= intervalMs;
}
