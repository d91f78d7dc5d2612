import type Stripe from 'stripe';
import type { ProductSpec } from '../types';
import type { PricePlan } from './pricing';

/**
 * Request bodies the adapter sends, as pure functions so the stripe-mock contract test can
 * validate each of them against Stripe's OpenAPI on its own.
 */

/** Our product's Stripe id: deterministic, so a retried or repeated upsert finds it with one GET. */
export function productExternalId(productId: string): string {
  return `prod_${productId.replace(/[^A-Za-z0-9]/g, '')}`;
}

export function productMetadata(spec: ProductSpec): Record<string, string> {
  return {
    product_id: spec.product_id,
    sku: spec.sku,
    tenant_id: spec.tenant_id,
    type: spec.type,
    tier: spec.tier ?? '',
  };
}

export function productCreateParams(spec: ProductSpec): Stripe.ProductCreateParams {
  return { id: productExternalId(spec.product_id), name: spec.name, active: true, metadata: productMetadata(spec) };
}

/** The update that makes an existing product match the spec, or null when it already does. */
export function productUpdateParams(
  existing: Pick<Stripe.Product, 'name' | 'active' | 'metadata'>,
  spec: ProductSpec,
): Stripe.ProductUpdateParams | null {
  const metadata = productMetadata(spec);
  const metadataDiffers = Object.entries(metadata).some(([k, v]) => (existing.metadata?.[k] ?? '') !== v);
  if (existing.name === spec.name && existing.active && !metadataDiffers) return null;
  return { name: spec.name, active: true, metadata };
}

export function priceCreateParams(
  productExternalId: string,
  spec: ProductSpec,
  plan: PricePlan,
): Stripe.PriceCreateParams {
  const params: Stripe.PriceCreateParams = {
    product: productExternalId,
    currency: plan.currency,
    unit_amount: plan.unit_amount,
    metadata: { product_id: spec.product_id, sku: spec.sku, version: String(spec.version), plan: plan.fingerprint },
  };
  if (plan.recurring)
    params.recurring = { interval: plan.recurring.interval, interval_count: plan.recurring.interval_count };
  if (Object.keys(plan.currency_options).length) {
    params.currency_options = Object.fromEntries(
      Object.entries(plan.currency_options).map(([c, amount]) => [c, { unit_amount: amount }]),
    );
  }
  return params;
}

export function paymentLinkMetadata(spec: ProductSpec, appId: string, priceId: string): Record<string, string> {
  return {
    app_id: appId,
    product_id: spec.product_id,
    sku: spec.sku,
    tenant_id: spec.tenant_id,
    price_id: priceId,
    trial_days: spec.trial_days ? String(spec.trial_days) : '',
  };
}

/**
 * One link per (app, product, price). The subscription it creates carries sku/app in its
 * metadata, so webhook events can be matched to the product without another API call.
 */
export function paymentLinkCreateParams(
  price: Pick<Stripe.Price, 'id' | 'type'>,
  spec: ProductSpec,
  appId: string,
): Stripe.PaymentLinkCreateParams {
  const tags = { sku: spec.sku, product_id: spec.product_id, app_id: appId };
  const params: Stripe.PaymentLinkCreateParams = {
    line_items: [{ price: price.id, quantity: 1 }],
    allow_promotion_codes: true,
    metadata: paymentLinkMetadata(spec, appId, price.id),
  };
  if (price.type === 'recurring') {
    params.subscription_data = {
      metadata: tags,
      ...(spec.trial_days && spec.trial_days > 0 ? { trial_period_days: spec.trial_days } : {}),
    };
  } else {
    params.payment_intent_data = { metadata: tags };
  }
  return params;
}
