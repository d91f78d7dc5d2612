import { DEFAULT_ENTITLEMENT } from '../domain/revenuecat';

/**
 * The catalogue as the file and the service both describe it, normalised so the two compare:
 * absent optional fields are null (or their default), products sorted by SKU, prices by
 * country then currency. Pure.
 */

export interface CataloguePrice {
  country: string;
  currency: string;
  /** Minor units of the currency. */
  amount: number;
}

export interface CatalogueProduct {
  sku: string;
  name: string;
  type: string;
  tier: string | null;
  kind: string;
  android_store_product_id: string | null;
  ios_store_product_id: string | null;
  trial_per_platform: Record<string, number> | null;
  /** The entitlement the product unlocks, as client apps name it; `premium` when the file names none. */
  entitlement: string;
  prices: CataloguePrice[];
}

export interface Catalogue {
  products: CatalogueProduct[];
  /** The published paywall; null when the service has none (or the file names none). */
  paywall: { published: boolean; config: Record<string, unknown> } | null;
}

/** The product fields a file sets, in the order pull writes them. */
export const PRODUCT_FIELDS = [
  'name',
  'type',
  'tier',
  'kind',
  'android_store_product_id',
  'ios_store_product_id',
  'trial_per_platform',
  'entitlement',
] as const;
export type ProductField = (typeof PRODUCT_FIELDS)[number];

const byPrice = (a: CataloguePrice, b: CataloguePrice) =>
  a.country.localeCompare(b.country) || a.currency.localeCompare(b.currency);

/** A product of either source, with defaults filled and prices in order. */
export function normaliseProduct(p: Partial<CatalogueProduct> & { sku: string }): CatalogueProduct {
  const trial = p.trial_per_platform && Object.keys(p.trial_per_platform).length ? p.trial_per_platform : null;
  return {
    sku: p.sku,
    name: p.name ?? p.sku,
    type: p.type ?? 'subscription',
    tier: p.tier ?? null,
    kind: p.kind ?? 'digital',
    android_store_product_id: p.android_store_product_id ?? null,
    ios_store_product_id: p.ios_store_product_id ?? null,
    trial_per_platform: trial ? sortKeys(trial) : null,
    entitlement: p.entitlement ?? DEFAULT_ENTITLEMENT,
    prices: [...(p.prices ?? [])]
      .map((x) => ({ country: x.country, currency: x.currency, amount: x.amount }))
      .sort(byPrice),
  };
}

export function sortKeys<T>(value: T): T {
  if (Array.isArray(value)) return value.map(sortKeys) as T;
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    ) as T;
  return value;
}

/** Two field values equal as the service stores them (objects compared with their keys sorted). */
export function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(sortKeys(a ?? null)) === JSON.stringify(sortKeys(b ?? null));
}
