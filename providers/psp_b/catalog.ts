import { ProviderRejectedError } from '../errors';
import type { PriceSpec, ProductSpec, Tier } from '../types';
import { PROVIDER } from './http';

// Pure mapping between our catalogue and Paddle's product, price and discount bodies.

export interface Money {
  amount: string;
  currency_code: string;
}
export interface PaddleProduct {
  id: string;
  name: string;
  status: 'active' | 'archived';
  tax_category: string;
  custom_data: Record<string, unknown> | null;
}
export interface PaddlePrice {
  id: string;
  product_id: string;
  status: 'active' | 'archived';
  description: string;
  name: string | null;
  billing_cycle: { interval: string; frequency: number } | null;
  trial_period: { interval: string; frequency: number } | null;
  unit_price: Money;
  unit_price_overrides: { country_codes: string[]; unit_price: Money }[];
  custom_data: Record<string, unknown> | null;
}
const CYCLES: Record<Tier, { interval: string; frequency: number }> = {
  weekly: { interval: 'week', frequency: 1 },
  monthly: { interval: 'month', frequency: 1 },
  quarterly: { interval: 'month', frequency: 3 },
  annual: { interval: 'year', frequency: 1 },
};

export function billingCycle(tier: Tier | null): { interval: string; frequency: number } | null {
  return tier ? CYCLES[tier] : null;
}

/** Our ids in Paddle's custom_data: how drift and retries find the objects again (Paddle has no idempotency header). */
export function productCustomData(spec: ProductSpec) {
  return { product_id: spec.product_id, sku: spec.sku, tenant_id: spec.tenant_id };
}

export function productBody(spec: ProductSpec) {
  return { name: spec.name, tax_category: 'standard', custom_data: productCustomData(spec) };
}

export function productNeedsUpdate(p: PaddleProduct, spec: ProductSpec): boolean {
  return p.name !== spec.name || p.tax_category !== 'standard' || !sameJson(p.custom_data, productCustomData(spec));
}

/**
 * Paddle prices hold one base `unit_price` and country overrides. The base is the US row
 * (else the first USD row, else the first row); every other country becomes an override,
 * countries sharing a currency and amount grouped into one override as Paddle allows.
 */
export function splitPrices(prices: PriceSpec[]): { base: Money; overrides: PaddlePrice['unit_price_overrides'] } {
  const base = prices.find((p) => p.country === 'US') ?? prices.find((p) => p.currency === 'USD') ?? prices[0];
  const groups = new Map<string, { money: Money; countries: Set<string> }>();
  for (const p of prices) {
    if (p === base) continue;
    const money = { amount: String(p.amount_minor), currency_code: p.currency };
    const key = `${money.currency_code}:${money.amount}`;
    const g = groups.get(key) ?? { money, countries: new Set<string>() };
    g.countries.add(p.country);
    groups.set(key, g);
  }
  for (const g of groups.values()) g.countries.delete(base.country);
  const overrides = [...groups.entries()]
    .filter(([, g]) => g.countries.size > 0)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([, g]) => ({ country_codes: [...g.countries].sort(), unit_price: g.money }));
  return { base: { amount: String(base.amount_minor), currency_code: base.currency }, overrides };
}

export function priceFields(spec: ProductSpec) {
  for (const p of spec.prices) {
    if (!Number.isInteger(p.amount_minor) || p.amount_minor < 0) {
      throw new ProviderRejectedError(PROVIDER, `price for ${p.country} must be a whole number of minor units ≥ 0`, {
        code: 'invalid_price',
      });
    }
  }
  const { base, overrides } = splitPrices(spec.prices);
  const cycle = billingCycle(spec.tier);
  const trialDays = spec.trial_days ?? 0;
  return {
    description: `${spec.name} (${spec.tier ?? 'one-time'})`,
    name: spec.tier ? spec.tier[0].toUpperCase() + spec.tier.slice(1) : spec.name,
    billing_cycle: cycle,
    // Paddle only allows a trial on a recurring price.
    trial_period: cycle && trialDays > 0 ? { interval: 'day', frequency: trialDays } : null,
    unit_price: base,
    unit_price_overrides: overrides,
    custom_data: productCustomData(spec),
  };
}

export function priceNeedsUpdate(p: PaddlePrice, fields: ReturnType<typeof priceFields>): boolean {
  return (Object.keys(fields) as (keyof typeof fields)[]).some((k) => !sameJson(stripTrialExtras(k, p[k]), fields[k]));
}

function stripTrialExtras(key: string, v: unknown): unknown {
  // Paddle answers trial_period with requires_payment_method too; we never set it.
  if (key === 'trial_period' && v && typeof v === 'object') {
    const { interval, frequency } = v as { interval: string; frequency: number };
    return { interval, frequency };
  }
  return v ?? null;
}

export function pricedLocales(spec: ProductSpec): number {
  return new Set(spec.prices.map((p) => p.country)).size;
}

function sameJson(a: unknown, b: unknown): boolean {
  return stable(a) === stable(b);
}

function stable(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stable).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stable((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v ?? null);
}
