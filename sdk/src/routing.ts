import type { CheckoutProduct, Platform, StoreBilling } from './types.js';

/**
 * The spec's "Android digital checkout routing" table, as one pure function.
 * Android digital purchases must go through the store: when that is impossible the
 * answer is `blocked`, never the browser (fail closed).
 */
export type Lane =
  | { lane: 'store'; productId: string }
  | { lane: 'web' }
  | { lane: 'blocked'; code: 'store_product_id_missing' | 'store_billing_unavailable'; reason: string };

export function routeCheckout(platform: Platform, product: CheckoutProduct, storeBilling: StoreBilling | undefined): Lane {
  if (platform !== 'android') return { lane: 'web' };
  if (product.kind === 'physical') return { lane: 'web' };
  const productId = typeof product.android_store_product_id === 'string' ? product.android_store_product_id.trim() : '';
  if (productId === '')
    return { lane: 'blocked', code: 'store_product_id_missing', reason: 'Android digital products are sold through the store; this product has no android_store_product_id.' };
  if (!storeBilling || typeof storeBilling.purchase !== 'function')
    return { lane: 'blocked', code: 'store_billing_unavailable', reason: 'Android digital checkout needs the store billing module: pass storeBilling to Billing.configure.' };
  if (storeBilling.activity === undefined || storeBilling.activity === null)
    return { lane: 'blocked', code: 'store_billing_unavailable', reason: 'Android digital checkout needs the foreground activity: pass storeBilling.activity.' };
  return { lane: 'store', productId };
}
