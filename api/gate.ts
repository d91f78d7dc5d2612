import type { Knex } from 'knex';
import { authenticate, bearerToken, type Principal } from './auth';
import { rateHeaders, rateLimited, takeToken } from './rate-limit';
import { assertNoTenantHeader } from './body-rules';

export interface Admission {
  principal: Principal;
  rateHeaders: Record<string, string>;
}

/**
 * What every management request passes before its operation runs, on every surface
 * (both REST hosts and the tool server): bearer key → principal, tenant headers refused,
 * one token from the tenant's shared bucket.
 */
export async function admit(db: Knex, headers: Record<string, string | string[] | undefined>): Promise<Admission> {
  const auth = headers.authorization;
  const principal = await authenticate(db, bearerToken(Array.isArray(auth) ? auth[0] : auth));
  assertNoTenantHeader(headers);
  const decision = await takeToken(db, principal.tenantId);
  if (!decision.allowed) throw rateLimited(decision);
  return { principal, rateHeaders: rateHeaders(decision) };
}
