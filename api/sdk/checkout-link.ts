import type { Knex } from 'knex';
import { WEB_PROVIDERS, isProvider } from '../../domain/providers';
import { findCheckoutLinks } from '../../db/checkout-links';
import { withTenant } from '../../db/tenant-tx';
import { assertNoNulBytes } from '../../operations/input-rules';
import { ApiError } from '../../operations/errors';
import type { AppActor as SdkActor } from './auth';

/**
 * GET /v1/sdk/checkout?plan_id=… → the provider-hosted checkout URL of the plan: the
 * app-scoped payment link of the key's app, in the key's mode. `plan_id` is the product's
 * id or sku. With several web providers linked, the first in WEB_PROVIDERS order wins
 * unless `provider` names one. Store providers have no payment links (the SDK routes
 * store purchases to the device's store), so they are refused here.
 */
export async function checkoutLink(db: Knex, who: SdkActor, query: Record<string, unknown>) {
  assertNoNulBytes(query); // Postgres refuses NUL in text: a client mistake, named, not a 500
  const planId = typeof query.plan_id === 'string' ? query.plan_id.trim() : '';
  if (!planId) throw new ApiError(400, 'invalid_request', 'plan_id is required.', { param: 'plan_id' });
  if (planId.length > 200) throw new ApiError(400, 'invalid_request', 'plan_id is too long.', { param: 'plan_id' });
  const provider = query.provider;
  if (
    provider !== undefined &&
    (typeof provider !== 'string' || !isProvider(provider) || !(WEB_PROVIDERS as readonly string[]).includes(provider))
  )
    throw new ApiError(400, 'invalid_request', `provider must be one of ${WEB_PROVIDERS.join(', ')}.`, {
      param: 'provider',
    });

  const link = await withTenant(db, who.tenantId, async (trx) => {
    const rows = await findCheckoutLinks(trx, {
      appId: who.appId,
      mode: who.mode,
      providers: provider ? [provider] : WEB_PROVIDERS,
      planId,
    });
    rows.sort((a, b) => WEB_PROVIDERS.indexOf(a.provider) - WEB_PROVIDERS.indexOf(b.provider));
    return rows[0];
  });
  if (!link)
    throw new ApiError(404, 'not_found', `No ${who.mode} payment link for plan "${planId}" in this app.`, {
      param: 'plan_id',
    });
  return {
    object: 'checkout_link' as const,
    plan_id: planId,
    product_id: link.product_id,
    sku: link.sku,
    provider: link.provider,
    mode: link.mode,
    url: link.url,
  };
}
