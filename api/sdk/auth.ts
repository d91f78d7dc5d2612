import type { Knex } from 'knex';
import { findAppByPublishableKey } from '../../db/apps';
import { looksLikeSecretKey, publishableKeyMode } from '../../domain/keys';
import { authorizationHeaders, parseBearer } from '../auth';
import { readsOverTenantLimit } from '../../runtime/metrics';
import { ApiError } from '../../operations/errors';
import {
  addressBucket,
  clientRateHeaders,
  clientRateLimited,
  takeClientTokens,
  tenantBucket,
  userBucket,
  type BucketSpec,
} from './limits';

export interface AppActor {
  tenantId: string;
  appId: string;
  /** pk_test_ reads test and sandbox records only; pk_live_ live records only. */
  mode: 'test' | 'live';
}

const invalidKey = (detail: string) =>
  new ApiError(401, 'invalid_api_key', detail, {}, { 'WWW-Authenticate': 'Bearer realm="billing-sdk"' });

/** Who is calling, as far as the client limits care. */
export interface Caller {
  /** The client's address (`ctx.ip`: X-Forwarded-For only from TRUSTED_PROXIES, api/client-address.ts). */
  address: string;
  /** The app user the request is about, when it names a valid one. */
  appUserId?: string;
  /**
   * A read of stored state (the premium check): when the tenant's client bucket is the only
   * empty one, it is served anyway, spending the address's and the app user's buckets only.
   */
  readOnly?: boolean;
}

export interface Admission {
  actor: AppActor;
  rateHeaders: Record<string, string>;
  /** Admitted while the tenant's client bucket was empty (a read only): answer from stored state at once. */
  overTenantLimit: boolean;
}

/**
 * Client endpoints take a publishable key only. A secret key is refused loudly, so nobody
 * ships one inside an app. A publishable key is public, so it spends the client buckets
 * (api/sdk/limits.ts: the tenant's client bucket, the client address's and the app user's),
 * never the management bucket the tenant's secret keys draw from.
 *
 * The tenant's client bucket is shared by every install, so whoever has many addresses can
 * empty it. For a read of stored state (`readOnly`, the premium check) that must not turn every
 * install's answer into a 429: when the tenant's bucket is the only empty one, the request is
 * taken again from the address's and the app user's buckets alone, and served. Those still
 * hold each client to its own share; everything else (checkout links, registrations, the
 * paywall) stays refused while the tenant's bucket is empty.
 */
export async function admitPublishable(db: Knex, rawHeaders: readonly string[], caller: Caller): Promise<Admission> {
  return admitActor(db, await identifyPublishable(db, rawHeaders), caller);
}

/**
 * The client limits for an app already identified by its public key (a publishable key, or a
 * RevenueCat-format key under /revenuecat): the same buckets, the same read-only allowance.
 */
export async function admitActor<A extends AppActor>(
  db: Knex,
  actor: A,
  caller: Caller,
): Promise<Admission & { actor: A }> {
  const buckets: BucketSpec[] = [tenantBucket(), addressBucket(caller.address)];
  if (caller.appUserId !== undefined) buckets.push(userBucket(caller.appUserId));
  let decision = await takeClientTokens(db, actor.tenantId, buckets);
  let overTenantLimit = false;
  if (
    !decision.allowed &&
    caller.readOnly &&
    decision.empty.length === 1 &&
    decision.empty[0] === tenantBucket().name
  ) {
    const own = buckets.filter((b) => b.name !== tenantBucket().name);
    decision = await takeClientTokens(db, actor.tenantId, own);
    overTenantLimit = decision.allowed;
    if (overTenantLimit) readsOverTenantLimit.inc();
  }
  if (!decision.allowed) throw clientRateLimited(decision);
  return { actor, rateHeaders: clientRateHeaders(decision), overTenantLimit };
}

/** The app behind a publishable key, or 401; spends nothing (refusals elsewhere use it as is). */
export async function identifyPublishable(db: Knex, rawHeaders: readonly string[]): Promise<AppActor> {
  // Node keeps only the first of repeated Authorization headers; two of them make a malformed request, as on /v1.
  const authorizations = authorizationHeaders(rawHeaders);
  if (authorizations.length > 1) throw invalidKey('Send exactly one Authorization header.');
  const token = parseBearer(authorizations[0]);
  if (!token) throw invalidKey('Provide the app’s publishable key as "Authorization: Bearer pk_…".');
  if (looksLikeSecretKey(token))
    throw invalidKey(
      'Secret keys are refused on client endpoints: never ship one in an app. Use the app’s publishable key (pk_test_… or pk_live_…).',
    );
  const mode = publishableKeyMode(token);
  if (!mode) throw invalidKey('Provide the app’s publishable key as "Authorization: Bearer pk_…".');
  const app = await findAppByPublishableKey(db, mode, token);
  if (!app) throw invalidKey('Unknown publishable key.');
  return { tenantId: app.tenant_id, appId: app.id, mode };
}
