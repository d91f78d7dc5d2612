import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { SECRET_KEY_RE } from '../domain/keys';
import { hashSecretKey } from './keys';
import type { Scope } from '../domain/scopes';
import { invalidApiKey } from './errors';

export interface Principal {
  tenantId: string;
  keyId: string;
  scopes: Scope[];
  keyName: string;
  expiresAt: Date | null;
}

/** Extract the bearer token; anything else (missing, other scheme, pk_ key, junk) is the same 401. */
export function bearerToken(header: string | undefined): string {
  if (!header) throw invalidApiKey();
  const m = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  if (!m || !SECRET_KEY_RE.test(m[1])) throw invalidApiKey();
  return m[1];
}

const LAST_USED_RESOLUTION_MS = 60_000;

/** Validate a key row found by hash: the final comparison is constant-time; revoked and expired keys are the same 401. */
export function principalFrom(row: KeyRow | undefined, hash: string, now = new Date()): Principal {
  if (!row) throw invalidApiKey();
  const a = Buffer.from(row.key_hash, 'hex');
  const b = Buffer.from(hash, 'hex');
  if (a.length !== b.length || !crypto.timingSafeEqual(a, b)) throw invalidApiKey();
  if (row.revoked_at) throw invalidApiKey();
  if (row.expires_at && new Date(row.expires_at).getTime() <= now.getTime()) throw invalidApiKey();
  return { tenantId: row.tenant_id, keyId: row.id, scopes: row.scopes, keyName: row.name, expiresAt: row.expires_at };
}

export interface KeyRow {
  id: string;
  tenant_id: string;
  key_hash: string;
  scopes: Scope[];
  name: string;
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
}

export const KEY_COLUMNS = 'id, tenant_id, key_hash, scopes, name, expires_at, revoked_at, last_used_at';

/**
 * last_used_at is written at most once a minute per key and never awaited on the request path.
 * Returns the write (which never rejects) when one was started, null when the stored value is
 * recent enough: callers off the request path, and tests, can await it instead of sleeping.
 */
export function touchLastUsed(db: Knex, row: KeyRow, now = new Date()): Promise<void> | null {
  if (!row.last_used_at || now.getTime() - new Date(row.last_used_at).getTime() > LAST_USED_RESOLUTION_MS) {
    return db('api_keys').where({ id: row.id }).update({ last_used_at: now }).then(() => {}, () => {});
  }
  return null;
}

export { hashSecretKey };
