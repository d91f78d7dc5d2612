import type { CheckoutProduct, Platform, StoreBilling } from './types.js';

/**
 * The spec's "Android digital checkout routing" table, as one pure function, plus the iOS
 * store lane. Android digital purchases must go through the store: when that is impossible the
 * answer is `blocked`, never the browser (fail closed). iOS and macOS digital purchases go
 * through StoreKit when the app passes both the product's `ios_store_product_id` and
 * `storeBilling`; otherwise through the web checkout, as before the store lane existed.
 */
export type Lane =
  | { lane: 'store'; store: 'store_android' | 'store_ios'; productId: string }
  | { lane: 'web' }
  | { lane: 'blocked'; code: 'store_product_id_missing' | 'store_billing_unavailable'; reason: string };

const trimmed = (v: unknown): string => (typeof v === 'string' ? v.trim() : '');

export function routeCheckout(
  platform: Platform,
  product: CheckoutProduct,
  storeBilling: StoreBilling | undefined,
): Lane {
  if (product.kind === 'physical') return { lane: 'web' };
  if (platform === 'ios' || platform === 'macos') {
    const productId = trimmed(product.ios_store_product_id);
    return productId !== '' && typeof storeBilling?.purchase === 'function'
      ? { lane: 'store', store: 'store_ios', productId }
      : { lane: 'web' };
  }
  if (platform !== 'android') return { lane: 'web' };
  const productId = trimmed(product.android_store_product_id);
  if (productId === '')
    return {
      lane: 'blocked',
      code: 'store_product_id_missing',
      reason: 'Android digital products are sold through the store; this product has no android_store_product_id.',
    };
  if (!storeBilling || typeof storeBilling.purchase !== 'function')
    return {
      lane: 'blocked',
      code: 'store_billing_unavailable',
      reason: 'Android digital checkout needs the store billing module: pass storeBilling to Billing.configure.',
    };
  if (storeBilling.activity === undefined || storeBilling.activity === null)
    return {
      lane: 'blocked',
      code: 'store_billing_unavailable',
      reason: 'Android digital checkout needs the foreground activity: pass storeBilling.activity.',
    };
  return { lane: 'store', store: 'store_android', productId };
}
