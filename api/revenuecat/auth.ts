import type Koa from 'koa';
import { findRevenueCatKey, markRevenueCatKeyUsed } from '../../db/revenuecat';
import { looksLikeSecretKey, publishableKeyMode } from '../../domain/keys';
import { parseRevenueCatKey, type RevenueCatPlatform } from '../../domain/revenuecat';
import { ApiError } from '../../operations/errors';
import type { Services } from '../../operations/services';
import { authorizationHeaders, parseBearer, touchLastUsedWith } from '../auth';
import { admitActor, type AppActor } from '../sdk/auth';

export interface RevenueCatActor extends AppActor {
  platform: RevenueCatPlatform;
  /** The key's id and when it was last used, as its row said (api/auth.ts touchLastUsedWith). */
  keyId: string;
  lastUsedAt: Date | null;
}

const invalidKey = (detail: string) =>
  new ApiError(401, 'invalid_api_key', detail, {}, { 'WWW-Authenticate': 'Bearer realm="revenuecat"' });

/**
 * The app behind a RevenueCat-format public key (`rcb_sb_…`, `rcb_…`, `appl_…`, `goog_…`), or
 * 401; spends nothing. Its row names the tenant, the app and the mode: the headers RevenueCat's
 * SDKs send (`X-Platform`, `X-Is-Sandbox`) are never asked. A secret key is refused loudly, as
 * on /v1/sdk, and so is a publishable key (its place is /v1/sdk).
 */
export async function identifyRevenueCat(db: Services['db'], rawHeaders: readonly string[]): Promise<RevenueCatActor> {
  const authorizations = authorizationHeaders(rawHeaders);
  if (authorizations.length > 1) throw invalidKey('Send exactly one Authorization header.');
  const token = parseBearer(authorizations[0]);
  if (!token) throw invalidKey('Provide the app’s public key as "Authorization: Bearer rcb_…" (or appl_…, goog_…).');
  if (looksLikeSecretKey(token))
    throw invalidKey(
      'Secret keys are refused on client endpoints: never ship one in an app. Use the app’s public key.',
    );
  if (publishableKeyMode(token))
    throw invalidKey(
      'This is a publishable key for /v1/sdk; RevenueCat’s SDKs take a key in their format (rcb_…, appl_…, goog_…).',
    );
  const format = parseRevenueCatKey(token);
  if (!format) throw invalidKey('Provide the app’s public key as "Authorization: Bearer rcb_…" (or appl_…, goog_…).');
  const key = await findRevenueCatKey(db, token);
  if (!key || key.platform !== format.platform) throw invalidKey('Unknown or revoked key.');
  return {
    tenantId: key.tenant_id,
    appId: key.app_id,
    mode: key.mode,
    platform: key.platform,
    keyId: key.id,
    lastUsedAt: key.last_used_at,
  };
}

/**
 * The key, then the client limits of /v1/sdk (api/sdk/limits.ts: the tenant's client bucket, the
 * address's, the app user's); the rate headers set, the tenant noted for the logs, the key's last
 * use recorded at most once a minute.
 */
export async function admitRevenueCat(
  ctx: Koa.Context,
  services: Services,
  opts: { appUserId?: string; readOnly?: boolean } = {},
): Promise<RevenueCatActor> {
  const actor = await identifyRevenueCat(services.db, ctx.req.rawHeaders);
  const { rateHeaders } = await admitActor(services.db, actor, {
    address: ctx.ip,
    ...(opts.appUserId === undefined ? {} : { appUserId: opts.appUserId }),
    ...(opts.readOnly ? { readOnly: true } : {}),
  });
  ctx.state.tenantId = actor.tenantId;
  ctx.set(rateHeaders);
  // Admitted: the key was used (a request the limits refused leaves it as it was, as for secret keys).
  void touchLastUsedWith(actor.lastUsedAt, (at) => markRevenueCatKeyUsed(services.db, actor.keyId, at));
  return actor;
}
