import type Router from '@koa/router';
import { upsertAttributes, type AttributeWrite } from '../../db/revenuecat';
import { withTenant } from '../../db/tenant-tx';
import { ATTRIBUTE_LIMITS, validAppUserId } from '../../domain/revenuecat';
import { assertNoNulBytes } from '../../operations/input-rules';
import { ApiError, invalidRequest } from '../../operations/errors';
import type { Services } from '../../operations/services';
import { readJsonObject } from '../json-body';
import { admitRevenueCat } from './auth';

const L = ATTRIBUTE_LIMITS;

/** The body's attributes as writes, or the first problem (RevenueCat's invalid-attributes-body code). */
export function parseAttributes(raw: Record<string, unknown>): AttributeWrite[] {
  const attrs = raw.attributes;
  if (!attrs || typeof attrs !== 'object' || Array.isArray(attrs))
    throw invalidRequest('attributes must be an object of {"value", "updated_at_ms"} by name', 'attributes');
  const entries = Object.entries(attrs as Record<string, unknown>);
  if (entries.length > L.perRequest) throw invalidRequest(`at most ${L.perRequest} attributes at once`, 'attributes');
  const now = Date.now();
  return entries.map(([name, v]) => {
    if (name.length < 1 || name.length > L.nameLength)
      throw invalidRequest(`attribute names are 1–${L.nameLength} characters`, 'attributes');
    if (!v || typeof v !== 'object' || Array.isArray(v))
      throw invalidRequest(`attributes.${name} must be {"value", "updated_at_ms"}`, 'attributes');
    const { value, updated_at_ms: at } = v as { value?: unknown; updated_at_ms?: unknown };
    if (value !== null && value !== undefined && typeof value !== 'string')
      throw invalidRequest(`attributes.${name}.value must be a string or null`, 'attributes');
    if (typeof value === 'string' && value.length > L.valueLength)
      throw invalidRequest(`attributes.${name}.value is longer than ${L.valueLength} characters`, 'attributes');
    if (at !== undefined && (typeof at !== 'number' || !Number.isSafeInteger(at) || at < 0))
      throw invalidRequest(`attributes.${name}.updated_at_ms must be a time in milliseconds`, 'attributes');
    return { name, value: typeof value === 'string' ? value : null, setAtMs: typeof at === 'number' ? at : now };
  });
}

/**
 * POST /v1/subscribers/{app_user_id}/attributes `{"attributes": {name: {"value", "updated_at_ms"}}}`:
 * stored per app user (a later `updated_at_ms` wins; a null value removes), shown on the customer
 * view (GET /v1/customers/{id}), never read for access. At most ATTRIBUTE_LIMITS.perUser per app
 * user: a request that would pass it writes nothing (RevenueCat's invalid-attributes code).
 */
export function registerAttributes(router: Router, services: Services): void {
  router.post('/v1/subscribers/:appUserId/attributes', async (ctx) => {
    const appUserId = ctx.params.appUserId;
    const valid = validAppUserId(appUserId);
    const actor = await admitRevenueCat(ctx, services, { appUserId: valid ? appUserId : undefined });
    if (!valid) throw invalidRequest('app_user_id must be 1–200 characters', 'app_user_id');
    const raw = await readJsonObject(ctx);
    assertNoNulBytes(raw);
    await storeAttributes(services, actor.tenantId, appUserId, parseAttributes(raw));
    ctx.body = {};
  });
}

/** Store the writes in one transaction, or none of them when the user would pass the bound. */
export async function storeAttributes(
  services: Services,
  tenantId: string,
  appUserId: string,
  writes: AttributeWrite[],
): Promise<void> {
  await withTenant(services.db, tenantId, async (trx) => {
    if (!(await upsertAttributes(trx, tenantId, appUserId, writes, L.perUser)))
      throw new ApiError(
        400,
        'invalid_subscriber_attributes',
        `An app user holds at most ${L.perUser} attributes; remove some (a null value) first.`,
      );
  });
}
