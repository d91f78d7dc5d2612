import { newId, nowSeconds } from './ids';
import type { PriceInfo } from './objects';
import type { Repo, Scope, StripeObject } from './repo';
import type { Renderers } from './render';

function info(price: StripeObject, renderers: Renderers): PriceInfo {
  const rec = (price.recurring as { interval?: string; interval_count?: number } | null) ?? {};
  return {
    price: renderers.prices(price, []),
    id: price.id,
    product: String(price.product),
    currency: String(price.currency),
    unit_amount: Number(price.unit_amount ?? 0),
    interval: rec.interval ?? 'month',
    interval_count: rec.interval_count ?? 1,
  };
}

/** The newest active payment link sold for this SKU (our adapter tags links with metadata.sku). */
export function linkForSku(repo: Repo, scope: Scope, sku: string | null): StripeObject | undefined {
  if (!sku) return undefined;
  return repo.listScoped(
    'payment_links',
    scope,
    (l) => l.active === true && (l.metadata as Record<string, string>).sku === sku,
  )[0];
}

/**
 * The price a checkout for `sku` charges: the SKU's payment link's price, else an active
 * price or product tagged with the SKU, else a made-up monthly 9.99 USD price (not stored).
 */
export function priceForSku(repo: Repo, renderers: Renderers, scope: Scope, sku: string | null): PriceInfo {
  const link = linkForSku(repo, scope, sku);
  const linkPrice = link ? (link._line_items as { price: string }[])[0]?.price : undefined;
  let price = linkPrice ? repo.getScoped('prices', linkPrice, scope) : undefined;
  if (!price && sku) {
    price =
      repo.listScoped(
        'prices',
        scope,
        (p) => p.active === true && (p.metadata as Record<string, string>).sku === sku,
      )[0] ??
      (() => {
        const product = repo.listScoped(
          'products',
          scope,
          (p) => (p.metadata as Record<string, string>).sku === sku,
        )[0];
        return product
          ? repo.listScoped('prices', scope, (p) => p.active === true && p.product === product.id)[0]
          : undefined;
      })();
  }
  if (price) return info(price, renderers);
  const id = newId('price', 24);
  const product = newId('prod', 14);
  return {
    price: {
      id,
      object: 'price',
      active: true,
      billing_scheme: 'per_unit',
      created: nowSeconds(),
      currency: 'usd',
      custom_unit_amount: null,
      livemode: scope.livemode,
      lookup_key: null,
      metadata: sku ? { sku } : {},
      nickname: null,
      product,
      recurring: { interval: 'month', interval_count: 1, meter: null, trial_period_days: null, usage_type: 'licensed' },
      tax_behavior: 'unspecified',
      tiers_mode: null,
      transform_quantity: null,
      type: 'recurring',
      unit_amount: 999,
      unit_amount_decimal: '999',
    },
    id,
    product,
    currency: 'usd',
    unit_amount: 999,
    interval: 'month',
    interval_count: 1,
  };
}
