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
 * last_used_at is written at most once a minute per key and never awaited on the request path.
 * Returns the write (which never rejects) when one was started, null when the stored value is
 * recent enough: callers off the request path, and tests, can await it instead of sleeping.
 */
export function touchLastUsed(db: Knex, row: KeyRow, now = new Date()): Promise<void> | null {
  if (!row.last_used_at || now.getTime() - new Date(row.last_used_at).getTime() > LAST_USED_RESOLUTION_MS) {
    return markKeyUsed(db, row.id, now).then(
      () => {},
      () => {},
    );
  }
  return null;
}
