import { loadCredential } from '../../db/connection-service';
import { ConnectionError } from '../../db/connections';
import { skuOfSyncedPlan } from '../../db/provider-listing';
import { withTenant } from '../../db/tenant-tx';
import type { ProviderId } from '../../domain/providers';
import type { Services } from '../../operations/services';
import { ProviderRateLimitedError, ProviderRejectedError, ProviderUnreachableError } from '../../providers/errors';
import type { NormalisedEvent } from '../../providers/types';
import { ApiError } from '../../operations/errors';

/** A plan never changes at Razorpay, so its SKU is kept per process; bounded, oldest out first. */
const MAX_ENTRIES = 10_000;
const known = new Map<string, string>();

/**
 * The SKU of a verified event, from the seller's side only. An event that names what was bought by id
 * (a Razorpay subscription names its plan; a payment, its subscription) has its SKU from the plan: a
 * plan our sync made is looked up in the catalogue (the common case, and no call leaves the receive
 * path); any other is read at the provider, with the connection's credential for the event's mode; the buyer-set notes
 * are never read for it. A plan's SKU is cached by tenant, provider, mode and plan id. The provider
 * unreachable: 503, and the provider delivers again.
 */
export async function withSellerSku(
  services: Services,
  provider: ProviderId,
  route: { tenant_id: string; connection_id: string },
  accountRef: string,
  event: NormalisedEvent,
): Promise<NormalisedEvent> {
  const adapter = services.adapters?.[provider];
  const bySubscription = !event.price_ref && event.subscription_external_id && adapter?.priceOfSubscription;
  if (event.sku || !adapter?.skuOfPrice || !services.vault || !(event.price_ref || bySubscription)) return event;
  const cacheKey = (price: string) => `${route.tenant_id}:${provider}:${event.mode}:${price}`;
  const cached = event.price_ref ? known.get(cacheKey(event.price_ref)) : undefined;
  if (cached) return { ...event, sku: cached };
  let price: string | null = event.price_ref ?? null;
  let sku: string | null = null;
  // A plan our sync made names its product in the catalogue: no call leaves the receive path for it.
  if (price) {
    sku = await withTenant(services.db, route.tenant_id, (trx) =>
      skuOfSyncedPlan(trx, { connectionId: route.connection_id, mode: event.mode, externalId: price! }),
    );
    if (sku) return remember(cacheKey(price), sku, event);
  }
  try {
    const credential = await withTenant(services.db, route.tenant_id, (trx) =>
      loadCredential(trx, services.vault!, route.connection_id, event.mode),
    );
    const ctx = { baseUrl: services.config.providerBaseUrls[provider], mode: event.mode, credential, accountRef };
    // A payment names its subscription alone: the plan it is on now.
    if (!price) price = await adapter.priceOfSubscription!(ctx, event.subscription_external_id!);
    if (price) sku = known.get(cacheKey(price)) ?? (await adapter.skuOfPrice(ctx, price));
  } catch (err) {
    if (err instanceof ProviderUnreachableError || err instanceof ProviderRateLimitedError)
      throw new ApiError(
        503,
        'temporarily_unavailable',
        'The event cannot be matched to its product right now; retry.',
        {},
        { 'Retry-After': '5' },
      );
    // No credential for this mode, or the provider refused the read: the event names no product.
    if (err instanceof ConnectionError || err instanceof ProviderRejectedError) return event;
    throw err;
  }
  if (!sku || !price) return event;
  return remember(cacheKey(price), sku, event);
}

function remember(key: string, sku: string, event: NormalisedEvent): NormalisedEvent {
  if (known.size >= MAX_ENTRIES) known.delete(known.keys().next().value!);
  known.set(key, sku);
  return { ...event, sku };
}
