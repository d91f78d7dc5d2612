/** The demo tenant's catalogue and history: enough that every endpoint returns something real-looking. */

export const DEMO_PRODUCTS = [
  {
    sku: 'premium_weekly',
    name: 'Premium (weekly)',
    tier: 'weekly',
    android_store_product_id: 'premium-weekly',
    ios_store_product_id: 'com.demo.premium.weekly',
    trial_per_platform: null,
  },
  {
    sku: 'premium_monthly',
    name: 'Premium (monthly)',
    tier: 'monthly',
    android_store_product_id: 'premium-monthly',
    ios_store_product_id: 'com.demo.premium.monthly',
    trial_per_platform: { android: 7, ios: 7, web: 14 },
  },
  {
    sku: 'premium_quarterly',
    name: 'Premium (quarterly)',
    tier: 'quarterly',
    android_store_product_id: 'premium-quarterly',
    ios_store_product_id: 'com.demo.premium.quarterly',
    trial_per_platform: null,
  },
  {
    sku: 'premium_annual',
    name: 'Premium (annual)',
    tier: 'annual',
    android_store_product_id: 'premium-annual',
    ios_store_product_id: 'com.demo.premium.annual',
    trial_per_platform: { web: 7 },
  },
] as const;

/** Monthly price per locale; other tiers scale from it. */
export const DEMO_LOCALES = [
  { country: 'US', currency: 'USD', monthly: 999 },
  { country: 'GB', currency: 'GBP', monthly: 899 },
  { country: 'DE', currency: 'EUR', monthly: 999 },
  { country: 'FR', currency: 'EUR', monthly: 999 },
  { country: 'IN', currency: 'INR', monthly: 9900 },
  { country: 'JP', currency: 'JPY', monthly: 1200 },
  { country: 'BR', currency: 'BRL', monthly: 2990 },
] as const;

/**
 * Gaps left on purpose, so a newcomer's first drift report shows what a person must settle:
 * the weekly tier is not priced in Brazil (missing-currency-for-country).
 */
export const DEMO_UNPRICED: Record<string, string[]> = { premium_weekly: ['BR'] };

const TIER_FACTOR: Record<string, number> = { weekly: 0.3, monthly: 1, quarterly: 2.7, annual: 9 };

/**
 * A tier's price in a locale, shaped like a store price point (the App Store sells only at
 * fixed points, and its emulator refuses others): n.99 in two-decimal currencies, round tens
 * or hundreds in zero-decimal ones.
 */
export function demoAmount(locale: { currency: string; monthly: number }, tier: string): number {
  const raw = Math.round(locale.monthly * TIER_FACTOR[tier]);
  if (raw % 100 === 0 || raw % 100 === 99) return raw;
  if (locale.currency === 'JPY') return raw < 10_000 ? Math.round(raw / 10) * 10 : Math.round(raw / 100) * 100;
  return Math.max(99, Math.round(raw / 100) * 100 - 1);
}

export const DEMO_COUPONS = [
  {
    code: 'WELCOME10',
    percent_off: 10,
    duration: 'once',
    counterparts: [
      { provider: 'psp_a', kind: 'coupon', external_id: 'co_demo_welcome10' },
      { provider: 'psp_c', kind: 'offer', external_id: 'offer_demo_welcome10' },
      { provider: 'store_android', kind: 'offer_id', external_id: 'welcome10' },
      { provider: 'store_ios', kind: 'offer_id', external_id: 'WELCOME10' },
    ],
  },
  {
    code: 'SUMMER5',
    amount_off_minor: 500,
    currency: 'USD',
    duration: 'once',
    counterparts: [
      { provider: 'psp_a', kind: 'coupon', external_id: 'co_demo_summer5' },
      { provider: 'psp_b', kind: 'discount', external_id: 'dsc_demo_summer5' },
    ],
  },
] as const;

export const DEMO_PAYWALL = {
  title: 'Go Premium',
  subtitle: 'Unlock every feature',
  default_sku: 'premium_annual',
  skus: ['premium_monthly', 'premium_annual'],
  features: ['No ads', 'Offline mode', 'Priority support'],
  theme: { accent: '#5b5bd6' },
};

const day = 86_400_000;
export function demoSubscribers(now = Date.now()) {
  return [
    {
      app_user_id: 'user_alice',
      email: 'alice@example.com',
      provider: 'psp_a',
      mode: 'live',
      status: 'active',
      sku: 'premium_monthly',
      external_id: 'sub_demo_alice',
      trial_started_at: new Date(now - 40 * day),
      trial_ended_at: new Date(now - 26 * day),
      ent: 'active',
    },
    {
      app_user_id: 'user_bob',
      email: 'bob@example.com',
      provider: 'psp_a',
      mode: 'test',
      status: 'trialing',
      sku: 'premium_monthly',
      external_id: 'sub_demo_bob',
      trial_started_at: new Date(now - 2 * day),
      trial_ended_at: null,
      ent: 'active',
    },
    {
      app_user_id: 'user_carol',
      email: 'carol@example.com',
      provider: 'psp_b',
      mode: 'live',
      status: 'refunded',
      sku: 'premium_annual',
      external_id: 'sub_demo_carol',
      trial_started_at: null,
      trial_ended_at: null,
      ent: 'revoked',
    },
    {
      app_user_id: 'user_dave',
      email: 'dave@example.com',
      provider: 'store_ios',
      mode: 'live',
      status: 'active',
      sku: 'premium_annual',
      external_id: '2000000000000001',
      trial_started_at: null,
      trial_ended_at: null,
      ent: 'active',
    },
    {
      app_user_id: 'user_erin',
      email: null,
      provider: 'store_android',
      mode: 'test',
      status: 'past_due',
      sku: 'premium_monthly',
      external_id: 'GPA.demo-erin',
      trial_started_at: null,
      trial_ended_at: null,
      ent: 'grace_period',
    },
    {
      app_user_id: 'user_frank',
      email: 'frank@example.com',
      provider: 'psp_c',
      mode: 'live',
      status: 'canceled',
      sku: 'premium_quarterly',
      external_id: 'sub_demo_frank',
      trial_started_at: null,
      trial_ended_at: null,
      ent: 'expired',
    },
  ] as const;
}
