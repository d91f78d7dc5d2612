import type { androidpublisher_v3 } from '@googleapis/androidpublisher';
import { ProviderRejectedError } from '../errors';
import type { PriceSpec, ProductSpec, Tier } from '../types';

type Subscription = androidpublisher_v3.Schema$Subscription;
type BasePlan = androidpublisher_v3.Schema$BasePlan;
type Money = androidpublisher_v3.Schema$Money;
type RegionalBasePlanConfig = androidpublisher_v3.Schema$RegionalBasePlanConfig;

export const PROVIDER = 'store_android';
/** Play versions its list of sellable regions; writes must name the version their prices were made for. */
export const REGIONS_VERSION = '2022/02';

const PERIOD_BY_TIER: Record<Tier, string> = { weekly: 'P1W', monthly: 'P1M', quarterly: 'P3M', annual: 'P1Y' };

const PRODUCT_ID = /^[a-z0-9][a-z0-9_.]{0,39}$/;
const BASE_PLAN_ID = /^[a-z0-9][a-z0-9-]{0,62}$/;

/**
 * Play's subscription product id. The spec makes android_store_product_id the store id of
 * the product; Play's productId charset ([a-z0-9_.]) differs from the base-plan charset
 * ([a-z0-9-]), so a hyphen becomes an underscore here. For plain alphanumeric ids (the
 * common case) productId, basePlanId and android_store_product_id are the same string.
 */
export function playProductId(spec: Pick<ProductSpec, 'sku' | 'android_store_product_id'>): string {
  const raw = spec.android_store_product_id?.trim() || spec.sku;
  if (PRODUCT_ID.test(raw)) return raw;
  const id = raw
    .toLowerCase()
    .replace(/[^a-z0-9_.]+/g, '_')
    .replace(/^[^a-z0-9]+/, '')
    .slice(0, 40);
  if (!id)
    throw new ProviderRejectedError(
      PROVIDER,
      'no usable Play product id: sku and android_store_product_id are empty after normalisation',
    );
  return id;
}

/** The base plan id; the spec says android_store_product_id equals it. */
export function playBasePlanId(spec: Pick<ProductSpec, 'sku' | 'android_store_product_id'>): string {
  const raw = spec.android_store_product_id?.trim() || spec.sku;
  if (BASE_PLAN_ID.test(raw)) return raw;
  const id = raw
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^[^a-z0-9]+/, '')
    .slice(0, 63)
    .replace(/-+$/, '');
  if (!id)
    throw new ProviderRejectedError(
      PROVIDER,
      'no usable Play base plan id: sku and android_store_product_id are empty after normalisation',
    );
  return id;
}

/** external ids we hand out: `productId` (product) or `productId/basePlanId` (plan). */
export function splitExternalId(externalId: string): { productId: string; basePlanId?: string } {
  const [productId, basePlanId] = externalId.split('/');
  return { productId, basePlanId: basePlanId || undefined };
}

export function billingPeriod(spec: ProductSpec): string {
  if (!spec.tier)
    throw new ProviderRejectedError(
      PROVIDER,
      `product ${spec.sku} has no billing tier; a Play base plan needs a billing period`,
    );
  return PERIOD_BY_TIER[spec.tier];
}

function minorDigits(currency: string): number {
  try {
    return new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
  } catch {
    throw new ProviderRejectedError(PROVIDER, `unknown currency ${currency}`);
  }
}

/** Minor units (cents) → Google's Money {units, nanos}, honouring the currency's exponent. */
export function toMoney(currency: string, amountMinor: number): Money {
  if (!Number.isInteger(amountMinor) || amountMinor < 0)
    throw new ProviderRejectedError(
      PROVIDER,
      `amount must be a non-negative integer of minor units, got ${amountMinor}`,
    );
  const digits = minorDigits(currency);
  const scale = 10 ** digits;
  return {
    currencyCode: currency.toUpperCase(),
    units: String(Math.floor(amountMinor / scale)),
    nanos: (amountMinor % scale) * 10 ** (9 - digits),
  };
}

/** One price per region: Play has a single price per country, in that country's currency. */
export function uniqueByCountry(prices: PriceSpec[]): PriceSpec[] {
  const seen = new Map<string, PriceSpec>();
  for (const p of prices) if (!seen.has(p.country.toUpperCase())) seen.set(p.country.toUpperCase(), p);
  return [...seen.values()];
}

/**
 * Regional configs for the wanted prices. A region priced before but absent now stays,
 * closed to new subscribers: Play keeps existing subscribers on a region's price, so a
 * region is withdrawn by availability rather than by deleting its price.
 */
export function regionalConfigs(
  prices: PriceSpec[],
  existing: RegionalBasePlanConfig[] = [],
): RegionalBasePlanConfig[] {
  const wanted = uniqueByCountry(prices).map((p) => ({
    regionCode: p.country.toUpperCase(),
    newSubscriberAvailability: true,
    price: toMoney(p.currency, p.amount_minor),
  }));
  const codes = new Set(wanted.map((w) => w.regionCode));
  const withdrawn = existing
    .filter((e) => e.regionCode && !codes.has(e.regionCode))
    .map((e) => ({ regionCode: e.regionCode, newSubscriberAvailability: false, price: e.price }));
  return [...wanted, ...withdrawn];
}

export function basePlanFor(spec: ProductSpec): BasePlan {
  return {
    basePlanId: playBasePlanId(spec),
    autoRenewingBasePlanType: {
      billingPeriodDuration: billingPeriod(spec),
      resubscribeState: 'RESUBSCRIBE_STATE_ACTIVE',
      legacyCompatible: false,
    },
    regionalConfigs: regionalConfigs(spec.prices),
  };
}

/** Play caps a listing title at 55 characters. */
function listingTitle(spec: ProductSpec): string {
  return spec.name.trim().slice(0, 55) || spec.sku;
}

export function newSubscription(packageName: string, spec: ProductSpec, language: string): Subscription {
  return {
    packageName,
    productId: playProductId(spec),
    listings: [{ languageCode: language, title: listingTitle(spec) }],
    basePlans: [basePlanFor(spec)],
  };
}

/** Wanted listings: ours in `language` replaced, other languages kept as the console left them. */
export function mergeListings(
  existing: Subscription['listings'],
  spec: ProductSpec,
  language: string,
): NonNullable<Subscription['listings']> {
  const list = existing ?? [];
  const ours = { languageCode: language, title: listingTitle(spec) };
  if (!list.some((l) => l.languageCode === language)) return [...list, ours];
  return list.map((l) => (l.languageCode === language ? { ...l, ...ours } : l));
}

/** Comparable form of a base plan (state is output only and never written). */
export function writableBasePlan(bp: BasePlan): BasePlan {
  const { state: _state, ...rest } = bp;
  return rest;
}

/** Stable JSON for change detection: key order from the server may differ from ours. */
export function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b)))
      : v,
  );
}
