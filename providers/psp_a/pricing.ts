import crypto from 'node:crypto';
import type { ProductSpec, Tier } from '../types';
import { rejected } from './errors';

export interface Recurring {
  interval: 'day' | 'week' | 'month' | 'year';
  interval_count: number;
}

/**
 * What one Stripe price must look like to sell the product in every currency we price:
 * the default currency's amount plus `currency_options` for the others. A Payment Link
 * on a multi-currency price shows each buyer their local currency, so one link per app
 * serves every country.
 */
export interface PricePlan {
  currency: string; // lower case, Stripe's spelling
  unit_amount: number;
  currency_options: Record<string, number>;
  recurring: Recurring | null;
  /** (country, currency) rows whose amount this price charges: the `priced_locales` count. */
  covered: number;
  /** Stable digest of the plan, part of the create's idempotency key. */
  fingerprint: string;
}

const TIER_RECURRING: Record<Tier, Recurring> = {
  weekly: { interval: 'week', interval_count: 1 },
  monthly: { interval: 'month', interval_count: 1 },
  quarterly: { interval: 'month', interval_count: 3 },
  annual: { interval: 'year', interval_count: 1 },
};

/** Subscriptions bill on their tier (monthly when none is set); other product types are one-time. */
export function recurringFor(spec: Pick<ProductSpec, 'tier' | 'type'>): Recurring | null {
  if (spec.tier) return TIER_RECURRING[spec.tier];
  return spec.type === 'subscription' ? TIER_RECURRING.monthly : null;
}

/**
 * A Stripe price holds one amount per currency, so countries sharing a currency share an
 * amount: per currency the amount most rows ask for wins (ties: the alphabetically first
 * country's), and rows asking another amount are not counted as priced.
 * Returns null when the product has no prices.
 */
export function planPrices(spec: ProductSpec): PricePlan | null {
  const rows = new Map<string, { country: string; currency: string; amount: number }>();
  for (const p of spec.prices) {
    const country = p.country.toUpperCase();
    const currency = p.currency.toLowerCase();
    if (!/^[a-z]{3}$/.test(currency))
      throw rejected(`invalid currency "${p.currency}" for ${country}`, 'invalid_currency');
    if (!Number.isInteger(p.amount_minor) || p.amount_minor < 0)
      throw rejected(`invalid amount ${p.amount_minor} for ${country}/${currency}`, 'invalid_amount');
    // a repeated pair: the last row wins
    rows.set(`${country}|${currency}`, { country, currency, amount: p.amount_minor });
  }
  if (rows.size === 0) return null;
  const byCurrency = new Map<string, { country: string; amount: number }[]>();
  for (const r of rows.values()) {
    const list = byCurrency.get(r.currency) ?? [];
    list.push(r);
    byCurrency.set(r.currency, list);
  }
  const amounts: Record<string, number> = {};
  let covered = 0;
  for (const [currency, list] of byCurrency) {
    list.sort((a, b) => a.country.localeCompare(b.country));
    const votes = new Map<number, number>();
    for (const r of list) votes.set(r.amount, (votes.get(r.amount) ?? 0) + 1);
    let best = list[0].amount;
    for (const [amount, n] of votes) if (n > votes.get(best)!) best = amount;
    amounts[currency] = best;
    covered += list.filter((r) => r.amount === best).length;
  }
  const currencies = Object.keys(amounts).sort();
  const currency = amounts.usd !== undefined ? 'usd' : currencies[0];
  const currency_options: Record<string, number> = {};
  for (const c of currencies) if (c !== currency) currency_options[c] = amounts[c];
  const recurring = recurringFor(spec);
  const fingerprint = crypto
    .createHash('sha256')
    .update(JSON.stringify([currency, amounts[currency], currency_options, recurring]))
    .digest('hex')
    .slice(0, 16);
  return { currency, unit_amount: amounts[currency], currency_options, recurring, covered, fingerprint };
}

/** Does an existing price (with `currency_options` expanded) already charge exactly this plan? */
export function priceMatchesPlan(
  price: {
    currency: string;
    unit_amount: number | null;
    recurring: { interval: string; interval_count: number } | null;
    currency_options?: Record<string, { unit_amount: number | null }> | null;
  },
  plan: PricePlan,
): boolean {
  if (price.currency !== plan.currency || price.unit_amount !== plan.unit_amount) return false;
  const r = price.recurring;
  if (
    plan.recurring
      ? !r || r.interval !== plan.recurring.interval || r.interval_count !== plan.recurring.interval_count
      : r
  )
    return false;
  const others = Object.entries(price.currency_options ?? {}).filter(([c]) => c !== price.currency);
  if (others.length !== Object.keys(plan.currency_options).length) return false;
  return others.every(([c, o]) => plan.currency_options[c] === o.unit_amount);
}
