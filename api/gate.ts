import type { Knex } from 'knex';
import { KEY_COLUMNS, bearerToken, hashSecretKey, principalFrom, touchLastUsed, type KeyRow, type Principal } from './auth';
import { invalidApiKey } from './errors';
import { granted, rateHeaders, rateLimited, refused, takeTokenSql } from './rate-limit';
import { assertNoTenantHeader } from './body-rules';

export interface Admission {
  principal: Principal;
  rateHeaders: Record<string, string>;
}

type Headers = Record<string, string | string[] | undefined>;

/**
 * The bearer token of a request, or the same 401 as any bad key. Two Authorization headers
 * make a malformed request: Node keeps only the first, so the raw header list is what tells.
 */
function tokenOf(headers: Headers, rawHeaders?: string[]): string {
  if (rawHeaders) {
    let n = 0;
    for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i].toLowerCase() === 'authorization') n++;
    if (n > 1) throw invalidApiKey();
  }
  const auth = headers.authorization;
  return bearerToken(Array.isArray(auth) ? auth[0] : auth);
}

/**
 * The checks of `admit` that need no database (a well-formed bearer key, no tenant header):
 * for a surface that must read its body before deciding to spend a token (the tool server
 * refuses JSON-RPC batches unspent), so a caller without a well-formed key still gets its 401
 * before its body is read.
 */
export function precheckKey(headers: Headers, rawHeaders?: string[]): void {
  tokenOf(headers, rawHeaders);
  assertNoTenantHeader(headers);
}

/**
 * What every management request passes before its operation runs, on every surface
 * (both REST hosts and the tool server): bearer key → principal, tenant headers refused,
 * one token from the tenant's shared bucket.
 *
 * Everything that can be refused without the database is refused first, so a refused request
 * neither spends a token nor touches `last_used_at`. Key lookup and the token take are then
 * one statement (one round trip on the hot path); only a valid key — not revoked, not
 * expired — can spend its tenant's tokens.
 */
export async function admit(db: Knex, headers: Headers, rawHeaders?: string[]): Promise<Admission> {
  const token = tokenOf(headers, rawHeaders);
  assertNoTenantHeader(headers);
  const hash = hashSecretKey(token);
  const { rows } = await db.raw(
    `with k as (select ${KEY_COLUMNS} from api_keys where key_hash = ?),
          live as (select tenant_id from k where revoked_at is null and (expires_at is null or expires_at > now())),
          taken as (${takeTokenSql('live')})
     select k.*, (select tokens from taken) as tokens_left from k`,
    [hash],
  );
  const row = rows[0] as (KeyRow & { tokens_left: number | null }) | undefined;
  const principal = principalFrom(row, hash);
  touchLastUsed(db, row!);
  const decision = row!.tokens_left !== null ? granted(row!.tokens_left) : await refused(db, principal.tenantId);
  if (!decision.allowed) throw rateLimited(decision);
  return { principal, rateHeaders: rateHeaders(decision) };
}

/**
 * A key check that spends nothing: for requests that will be refused anyway (no such route,
 * method not allowed), so an unauthenticated caller learns nothing about which routes exist.
 */
export async function verifyKey(db: Knex, headers: Headers, rawHeaders?: string[]): Promise<Principal> {
  const hash = hashSecretKey(tokenOf(headers, rawHeaders));
  const row = (await db('api_keys').where({ key_hash: hash }).first(KEY_COLUMNS.split(', '))) as KeyRow | undefined;
  return principalFrom(row, hash);
}
