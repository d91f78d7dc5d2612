import type { androidpublisher_v3 } from '@googleapis/androidpublisher';
import { countryFromAlpha2 } from '../../domain/country';
import { ProviderRejectedError } from '../errors';
import type { StorePurchase } from '../types';
import { PROVIDER } from './catalog';

type PurchaseV2 = androidpublisher_v3.Schema$SubscriptionPurchaseV2;
type LineItem = androidpublisher_v3.Schema$SubscriptionPurchaseLineItem;

/**
 * subscriptionState → what the entitlement may grant. CANCELED keeps access until the paid
 * period ends; ON_HOLD and PAUSED have none. A refund-revocation reads as EXPIRED here
 * (Play keeps no "revoked" state): the REVOKED notification is what says "revoked".
 */
export function purchaseState(p: PurchaseV2, item: LineItem | undefined, now: Date): StorePurchase['state'] {
  switch (p.subscriptionState) {
    case 'SUBSCRIPTION_STATE_ACTIVE':
      return 'active';
    case 'SUBSCRIPTION_STATE_IN_GRACE_PERIOD':
      return 'grace_period';
    case 'SUBSCRIPTION_STATE_PENDING':
      return 'pending';
    case 'SUBSCRIPTION_STATE_CANCELED': {
      const expiry = item?.expiryTime ? Date.parse(item.expiryTime) : NaN;
      return Number.isFinite(expiry) && expiry > now.getTime() ? 'active' : 'expired';
    }
    default:
      // ON_HOLD, PAUSED, EXPIRED, PENDING_PURCHASE_CANCELED, and anything Play adds later.
      return 'expired';
  }
}

/** The line item for the product we were asked about: by Play productId or by base plan id. */
function pickLineItem(p: PurchaseV2, storeProductId?: string): LineItem | undefined {
  const items = p.lineItems ?? [];
  if (!storeProductId) return items[0];
  const norm = storeProductId.toLowerCase().replace(/-/g, '_');
  return items.find(
    (i) => i.productId === storeProductId || i.offerDetails?.basePlanId === storeProductId || i.productId === norm,
  );
}

export function toStorePurchase(
  token: string,
  p: PurchaseV2,
  storeProductId: string | undefined,
  now = new Date(),
): StorePurchase {
  const item = pickLineItem(p, storeProductId);
  if (!item) {
    // A token for another product must not unlock this one (purchase-token reuse).
    throw new ProviderRejectedError(PROVIDER, `purchase token is not for product ${storeProductId}`, {
      code: 'product_mismatch',
    });
  }
  return {
    provider: 'store_android',
    purchase_id: token,
    store_product_id: item.productId ?? '',
    app_user_id: p.externalAccountIdentifiers?.obfuscatedExternalAccountId ?? null,
    // Play marks license-tester purchases with a testPurchase object; real ones have none.
    is_sandbox: p.testPurchase != null,
    state: purchaseState(p, item, now),
    expires_at: item.expiryTime ?? null,
    acknowledged: p.acknowledgementState === 'ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED',
    // Set on an upgrade, a downgrade and a resubscribe: the purchase this one replaces.
    linked_purchase_id: p.linkedPurchaseToken ?? null,
    // The country (ISO 3166-1 alpha-2) of the buyer's account when the subscription was granted.
    ...(countryFromAlpha2(p.regionCode) ? { country: countryFromAlpha2(p.regionCode) } : {}),
    raw: p,
  };
}
