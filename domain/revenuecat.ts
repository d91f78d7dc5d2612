import { minorDigits } from './catalogue';
import { isPremiumState } from './entitlement';
import type { Mode, ProviderId } from './providers';

/**
 * RevenueCat's client API, the pure part (docs/revenuecat-compatibility.md): the formats of
 * RevenueCat-style public keys, the limits on subscriber attributes, and the bodies RevenueCat's
 * SDKs decode, built from the same rows and the same premium rule as /v1/sdk.
 */

export const REVENUECAT_PLATFORMS = ['web', 'ios', 'android'] as const;
export type RevenueCatPlatform = (typeof REVENUECAT_PLATFORMS)[number];

/**
 * What a key of that platform and mode starts with: RevenueCat's own prefixes. The web SDK
 * treats `rcb_sb_` as sandbox; the mobile keys name no mode (the stored key row does).
 */
export function revenuecatKeyPrefix(platform: RevenueCatPlatform, mode: Mode): string {
  if (platform === 'web') return mode === 'test' ? 'rcb_sb_' : 'rcb_';
  return platform === 'ios' ? 'appl_' : 'goog_';
}

const KEY_RE = /^(rcb_sb_|rcb_|appl_|goog_)([0-9A-Za-z]{24,64})$/;

/**
 * The platform a well-formed RevenueCat-style key names, and its mode when the format says one
 * (the web keys); null for anything else. The key's row decides the rest.
 */
export function parseRevenueCatKey(key: string): { platform: RevenueCatPlatform; mode: Mode | null } | null {
  const m = KEY_RE.exec(key);
  if (!m) return null;
  if (m[1] === 'rcb_sb_') return { platform: 'web', mode: 'test' };
  if (m[1] === 'rcb_') return { platform: 'web', mode: 'live' };
  return { platform: m[1] === 'appl_' ? 'ios' : 'android', mode: null };
}

/** What the dashboard and the CLI show to recognise a key: its prefix and its last four characters. */
export function revenuecatKeyHint(key: string): string {
  const m = KEY_RE.exec(key);
  return `${m ? m[1] : ''}…${key.slice(-4)}`;
}

/** RevenueCat's anonymous ids (`$RCAnonymousID:` and 32 hex digits): a logIn from one is an alias. */
export const ANONYMOUS_PREFIX = '$RCAnonymousID:';
export const isAnonymousAppUserId = (id: string): boolean => id.startsWith(ANONYMOUS_PREFIX);

/** An app user id as RevenueCat's paths carry it: 1–200 characters, no NUL. */
export const validAppUserId = (id: unknown): id is string =>
  typeof id === 'string' && id.length >= 1 && id.length <= 200 && !id.includes('\u0000');

/** The entitlement a product unlocks when it names none. */
export const DEFAULT_ENTITLEMENT = 'premium';
/** An entitlement identifier (migration 056 spells the same check). */
export const ENTITLEMENT_ID_RE = /^[A-Za-z0-9_.:-]{1,100}$/;

/** Subscriber attributes: stored and shown, never read for access; bounded per app user. */
export const ATTRIBUTE_LIMITS = { perUser: 100, perRequest: 100, nameLength: 100, valueLength: 500 } as const;

/**
 * RevenueCat's backend error codes the SDKs branch on (purchases-js `BackendErrorCode`,
 * purchases-android `BackendErrorCode`), and the HTTP status each comes with.
 */
export const RC_ERROR = {
  invalidApiKey: 7225,
  emptyAppUserId: 7220,
  badRequest: 7226,
  invalidReceiptToken: 7103,
  cannotTransferPurchase: 7102,
  storeProblem: 7101,
  productIdForGoogleReceiptNotProvided: 7106,
  tooManyRequests: 7114,
  internalServerError: 7110,
  invalidSubscriberAttributes: 7263,
  invalidSubscriberAttributesBody: 7264,
  invalidPlatform: 7000,
} as const;

/** RevenueCat's name for where a purchase was made. */
const STORE: Record<string, string> = {
  psp_a: 'stripe',
  psp_b: 'paddle',
  store_ios: 'app_store',
  store_android: 'play_store',
};
export const rcStore = (provider: ProviderId | string | null, source: string): string =>
  source === 'grant' ? 'promotional' : ((provider && STORE[provider]) ?? 'unknown');

/** One access row as the /v1/sdk read has it, with its product's catalogue fields. */
export interface AccessRow {
  source: 'paid' | 'grant' | 'provisional';
  provider: string | null;
  state: string;
  is_sandbox: boolean;
  product_id: string | null;
  sku: string | null;
  expires_at: string | null;
  grace_until: string | null;
  updated_at: string;
  created_at: string;
  /** The row's own id (RevenueCat's SDKs keep a one-time purchase's as its transaction identifier). */
  id?: string;
}
export interface ProductFacts {
  sku: string;
  entitlement: string | null;
  android_store_product_id: string | null;
  ios_store_product_id: string | null;
}

const ms = (iso: string | null) => (iso === null ? null : Date.parse(iso));
const isoOf = (t: number | null) => (t === null ? null : new Date(t).toISOString());

/** The product id RevenueCat's SDKs know a purchase by: the store's id for a store purchase, else the SKU. */
function rcProductId(row: AccessRow, product: ProductFacts | undefined, entitlement: string): string {
  if (!product) return row.source === 'grant' ? `rc_promo_${entitlement}` : (row.sku ?? 'unknown');
  if (row.provider === 'store_android' && product.android_store_product_id) return product.android_store_product_id;
  if (row.provider === 'store_ios' && product.ios_store_product_id) return product.ios_store_product_id;
  return product.sku;
}

/**
 * An App Store purchase with no end: a non-consumable or a non-renewing subscription, whose
 * transactions carry no expiry (an auto-renewable one always does). RevenueCat's SDKs list these
 * as non-subscription transactions. Other providers sell subscriptions only here.
 */
function isOneTimePurchase(row: AccessRow): boolean {
  return row.source === 'paid' && row.provider === 'store_ios' && row.expires_at === null && row.grace_until === null;
}

/**
 * When RevenueCat's SDKs should take the access as ending. They decide `isActive` by
 * `expires_date` alone (null or later than now), so the date carries our premium rule: access our
 * rule grants ends at the later of the paid period and its grace (never, when neither is set), and
 * at least a minute after now while the rule still grants it (an end the worker has not yet
 * written); access it does not grant ended when the row stopped granting it, or earlier.
 */
function accessEnd(row: AccessRow, now: number): number | null {
  const expires = ms(row.expires_at);
  const grace = ms(row.grace_until);
  if (isPremiumState(row.state)) {
    if (expires === null && grace === null) return null;
    return Math.max(expires ?? 0, grace ?? 0, now + 60_000);
  }
  const updated = ms(row.updated_at) ?? now;
  return Math.min(expires ?? updated, updated, now - 1);
}

/**
 * RevenueCat's customer info body (`GET /v1/subscribers/{id}`, and what identify and receipts
 * answer) from the rows of the /v1/sdk read: one entry per entitlement identifier (the product's
 * `entitlement`, `premium` when unset), the best row winning (granting first, then the latest end).
 */
export function customerInfoBody(input: {
  appUserId: string;
  originalAppUserId: string;
  rows: readonly AccessRow[];
  products: ReadonlyMap<string, ProductFacts>;
  firstSeen: string | null;
  now: number;
}) {
  const { rows, products, now } = input;
  const entitlements: Record<string, Record<string, unknown>> = {};
  const best = new Map<string, { active: boolean; end: number | null }>();
  const subscriptions: Record<string, Record<string, unknown>> = {};
  const nonSubscriptions: Record<string, Record<string, unknown>[]> = {};
  let firstPurchase: number | null = null;
  for (const row of rows) {
    const product = row.product_id ? products.get(row.product_id) : undefined;
    const entitlement = product?.entitlement ?? DEFAULT_ENTITLEMENT;
    const productId = rcProductId(row, product, entitlement);
    const end = accessEnd(row, now);
    const purchased = ms(row.created_at) ?? now;
    firstPurchase = firstPurchase === null ? purchased : Math.min(firstPurchase, purchased);
    const active = isPremiumState(row.state);
    if (isOneTimePurchase(row)) {
      // A purchase that never ends (a non-consumable) is not a subscription to RevenueCat's SDKs:
      // they list it among the non-subscription transactions, by product, while it is not refunded.
      if (active)
        (nonSubscriptions[productId] ??= []).push({
          id: row.id ?? `${productId}_${purchased}`,
          is_sandbox: row.is_sandbox,
          original_purchase_date: isoOf(purchased),
          purchase_date: isoOf(purchased),
          store: rcStore(row.provider, row.source),
          store_transaction_id: null,
        });
    } else
      subscriptions[productId] = {
        purchase_date: isoOf(purchased),
        original_purchase_date: isoOf(purchased),
        expires_date: isoOf(end),
        store: rcStore(row.provider, row.source),
        is_sandbox: row.is_sandbox,
        unsubscribe_detected_at: null,
        billing_issues_detected_at: row.state === 'grace_period' ? row.updated_at : null,
        grace_period_expires_date: row.grace_until,
        refunded_at: row.state === 'revoked' ? row.updated_at : null,
        period_type: 'normal',
        ownership_type: 'PURCHASED',
        store_transaction_id: null,
        auto_resume_date: null,
      };
    const prior = best.get(entitlement);
    const better =
      !prior ||
      (active && !prior.active) ||
      (active === prior.active && (end === null ? prior.end !== null : prior.end !== null && end > prior.end));
    if (!better) continue;
    best.set(entitlement, { active, end });
    entitlements[entitlement] = {
      expires_date: isoOf(end),
      grace_period_expires_date: row.grace_until,
      product_identifier: productId,
      product_plan_identifier: null,
      purchase_date: isoOf(purchased),
    };
  }
  const requestDate = new Date(now);
  const firstSeen = input.firstSeen ?? isoOf(firstPurchase) ?? requestDate.toISOString();
  return {
    request_date: requestDate.toISOString(),
    request_date_ms: now,
    subscriber: {
      entitlements,
      subscriptions,
      non_subscriptions: nonSubscriptions,
      other_purchases: {},
      first_seen: firstSeen,
      last_seen: requestDate.toISOString(),
      original_app_user_id: input.originalAppUserId,
      original_application_version: null,
      original_purchase_date: isoOf(firstPurchase),
      management_url: null,
    },
  };
}

/** RevenueCat's package identifier for a product's billing period. */
const PACKAGE_OF_TIER: Record<string, string> = {
  weekly: '$rc_weekly',
  monthly: '$rc_monthly',
  quarterly: '$rc_three_month',
  annual: '$rc_annual',
};
/** ISO 8601 duration of a billing period. */
const PERIOD_OF_TIER: Record<string, string> = { weekly: 'P1W', monthly: 'P1M', quarterly: 'P3M', annual: 'P1Y' };

export interface OfferingProduct {
  sku: string;
  name: string;
  tier: string | null;
}

/** The one offering, `default`, of a published paywall: one package per listed product, in its order. */
export function offeringsBody(
  paywall: { title: string; subtitle?: string; skus: string[] } | null,
  catalogue: ReadonlyMap<string, OfferingProduct>,
) {
  if (!paywall) return { current_offering_id: null, offerings: [] };
  const seen = new Set<string>();
  const packages = [];
  for (const sku of paywall.skus) {
    const p = catalogue.get(sku);
    if (!p) continue;
    // Two products of one period: the second keeps its SKU as a custom package id.
    let id = (p.tier && PACKAGE_OF_TIER[p.tier]) || sku;
    if (seen.has(id)) id = sku;
    seen.add(id);
    packages.push({ identifier: id, platform_product_identifier: sku });
  }
  return {
    current_offering_id: 'default',
    offerings: [
      {
        identifier: 'default',
        description: paywall.subtitle ? `${paywall.title}: ${paywall.subtitle}` : paywall.title,
        metadata: null,
        packages,
      },
    ],
  };
}

export interface PriceRow {
  country: string;
  currency: string;
  amount_minor: number | string;
}

/** The price shown for a product: the asked currency's, else the US price, else the first country's. */
export function pickPrice(prices: readonly PriceRow[], currency: string | undefined): PriceRow | undefined {
  const sorted = [...prices].sort((a, b) => (a.country < b.country ? -1 : a.country > b.country ? 1 : 0));
  if (currency) return sorted.find((p) => p.currency === currency.toUpperCase());
  return sorted.find((p) => p.country === 'US') ?? sorted[0];
}

/** Minor units to RevenueCat's micros (USD 999 → 9,990,000; JPY 1200 → 1,200,000,000). */
export const toMicros = (amountMinor: number, currency: string): number =>
  amountMinor * 10 ** (6 - minorDigits(currency));

/** One entry of the web SDK's `product_details`. */
export function productDetails(p: OfferingProduct, price: PriceRow) {
  const period = (p.tier && PERIOD_OF_TIER[p.tier]) || 'P1M';
  return {
    identifier: p.sku,
    product_type: 'subscription',
    title: p.name || p.sku,
    description: null,
    default_purchase_option_id: 'base_option',
    purchase_options: {
      base_option: {
        id: 'base_option',
        price_id: `${p.sku}:${price.currency}`,
        base: {
          period_duration: period,
          cycle_count: 1,
          price: { amount_micros: toMicros(Number(price.amount_minor), price.currency), currency: price.currency },
        },
        trial: null,
        intro_price: null,
      },
    },
  };
}
