import type { Knex } from 'knex';
import { KEY_COLUMNS, bearerToken, hashSecretKey, principalFrom, touchLastUsed, type KeyRow, type Principal } from './auth';
import { granted, rateHeaders, rateLimited, refused, takeTokenSql } from './rate-limit';
import { assertNoTenantHeader } from './body-rules';

export interface Admission {
  principal: Principal;
  rateHeaders: Record<string, string>;
}

/**
 * What every management request passes before its operation runs, on every surface
 * (both REST hosts and the tool server): bearer key → principal, tenant headers refused,
 * one token from the tenant's shared bucket.
 *
 * Key lookup and the token take are one statement (one round trip on the hot path); only a
 * valid key — not revoked, not expired — can spend its tenant's tokens.
 */
export async function admit(db: Knex, headers: Record<string, string | string[] | undefined>): Promise<Admission> {
  const auth = headers.authorization;
  const token = bearerToken(Array.isArray(auth) ? auth[0] : auth);
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
  assertNoTenantHeader(headers);
  const decision = row!.tokens_left !== null ? granted(row!.tokens_left) : await refused(db, principal.tenantId);
  if (!decision.allowed) throw rateLimited(decision);
  return { principal, rateHeaders: rateHeaders(decision) };
}
