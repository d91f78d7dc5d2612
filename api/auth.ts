import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { markKeyUsed, type KeyRow } from '../db/api-keys';
import { SECRET_KEY_RE } from '../domain/keys';
import { invalidApiKey } from '../operations/errors';
import type { KeyActor } from '../operations/actor';

/**
 * The values of every Authorization header a request sent, from Node's raw header list: Node
 * keeps only the first of repeated ones, so only the raw list tells that there were two (a
 * malformed request, on /v1 and /v1/sdk alike).
 */
export function authorizationHeaders(rawHeaders: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2)
    if (rawHeaders[i].toLowerCase() === 'authorization') out.push(rawHeaders[i + 1]);
  return out;
}

/**
 * The token of an `Authorization: Bearer <token>` header, or undefined for anything else. The one bearer parser, for
 * secret and publishable keys alike.
 */
export function parseBearer(header: string | undefined): string | undefined {
  return header ? /^Bearer[ ]+(\S+)\s*$/i.exec(header)?.[1] : undefined;
}

/**
 * Extract a secret key from the bearer header; anything else (missing, other scheme, pk_ key, junk) is the same 401.
 */
export function bearerToken(header: string | undefined): string {
  const token = parseBearer(header);
  if (!token || !SECRET_KEY_RE.test(token)) throw invalidApiKey();
  return token;
}

const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * Validate a key row found by hash: the final comparison is constant-time; revoked and expired keys are the same 401.
 */
export function actorFrom(row: KeyRow | undefined, hash: string, now = new Date()): KeyActor {
  if (!row) throw invalidApiKey();
  const a = Buffer.from(row.key_hash, 'hex');
  const b = Buffer.from(hash, 'hex');
  if (a.length !== b.length || !crypto.timingSafeEqual(a, b)) throw invalidApiKey();
  if (row.revoked_at) throw invalidApiKey();
  if (row.expires_at && new Date(row.expires_at).getTime() <= now.getTime()) throw invalidApiKey();
  return {
    kind: 'api_key',
    tenantId: row.tenant_id,
    keyId: row.id,
    scopes: row.scopes,
    keyName: row.name,
    expiresAt: row.expires_at,
    requireApproval: row.require_approval === true,
  };
}

/**
 * When a key was last used, for every kind of key (secret keys here, the keys for RevenueCat's
 * SDKs in api/revenuecat/auth.ts): the key's row, read by the lookup the request makes anyway,
 * carries its `last_used_at`, and the request writes it only when that is more than a minute
 * old, never awaited on the request path. So a hot key costs one small write a minute (per api
 * process at most, when several race on the same minute), none per request, and nothing is
 * lost on a crash: the write is made at the use, not kept for later. The value is right to
 * the minute. Returns the write (which never rejects) when one was started, null when the
 * stored value is recent enough: callers off the request path, and tests, can await it.
 */
export function touchLastUsedWith(
  lastUsedAt: Date | string | null,
  write: (at: Date) => Promise<void>,
  now = new Date(),
): Promise<void> | null {
  if (lastUsedAt && now.getTime() - new Date(lastUsedAt).getTime() <= LAST_USED_RESOLUTION_MS) return null;
  return write(now).then(
    () => {},
    () => {},
  );
}

/** A secret key's last use (touchLastUsedWith). */
export function touchLastUsed(db: Knex, row: KeyRow, now = new Date()): Promise<void> | null {
  return touchLastUsedWith(row.last_used_at, (at) => markKeyUsed(db, row.id, at), now);
}
