import crypto from 'node:crypto';
import type { ProductSpec } from '../../providers/types';

/** A product as the sync hands it to an adapter; each suite overrides what its assertions rely on. */
export function productSpec(over: Partial<ProductSpec> = {}): ProductSpec {
  return {
    product_id: crypto.randomUUID(),
    tenant_id: crypto.randomUUID(),
    sku: 'premium_monthly',
    name: 'Premium Monthly',
    type: 'subscription',
    tier: 'monthly',
    version: 1,
    prices: [
      { country: 'US', currency: 'USD', amount_minor: 999 },
      { country: 'DE', currency: 'EUR', amount_minor: 899 },
      { country: 'JP', currency: 'JPY', amount_minor: 1200 },
    ],
    ...over,
  };
}
