import type { TIERS } from '../catalogue';
import { MONTHLY_SHARE } from '../mrr';
import type { SubscriptionStatus } from '../subscription';
import { addMonths } from './periods';

type Tier = (typeof TIERS)[number];

/**
 * One subscription's history as the charts read it (docs/charts.md): every status it took, with
 * the product it was on, oldest first. Every chart is a sum over these histories of what the
 * functions below derive from one of them, so each definition is written once, here.
 */
export interface HistoryStep {
  /** Epoch milliseconds. */
  at: number;
  status: SubscriptionStatus;
  product_id: string | null;
}

export interface SubscriptionHistory {
  id: string;
  /** Who pays: the app user when known, else the subscription itself (one customer per subscription). */
  customer: string;
  provider: string;
  /** The buyer's country (ISO 3166-1 alpha-2) when a provider said it; null: unknown. */
  country: string | null;
  steps: HistoryStep[];
}

export interface ChartPrice {
  country: string;
  currency: string;
  amount_minor: number;
}

export interface ChartProduct {
  sku: string;
  tier: Tier | null;
  /** Oldest first: the first is the price a buyer of unknown country is valued at. */
  prices: ChartPrice[];
}

export type Catalogue = ReadonlyMap<string, ChartProduct>;

/** What one billing period of a subscription costs, in one currency; null: the product has no tier or no price. */
export interface PeriodPrice {
  tier: Tier;
  currency: string;
  amount_minor: number;
}

/** Paying: the status that counts in MRR and revenue. A trial, a billing retry, a cancellation do not. */
export const isPaying = (s: SubscriptionStatus) => s === 'active';

/**
 * The price a subscription pays for a product: the price for the buyer's country when the
 * product has one, else the product's first price. One currency per subscription and period, so
 * amounts in different currencies are never added together.
 */
export function priceFor(catalogue: Catalogue, productId: string | null, country: string | null): PeriodPrice | null {
  const product = productId ? catalogue.get(productId) : undefined;
  if (!product?.tier || product.prices.length === 0) return null;
  const price = product.prices.find((p) => p.country === country) ?? product.prices[0];
  return { tier: product.tier, currency: price.currency, amount_minor: price.amount_minor };
}

/** Monthly value of one period's price, exact (not rounded): rounding happens once, on the chart's sums. */
export function monthlyValue(p: PeriodPrice): number {
  const share = MONTHLY_SHARE[p.tier];
  return (p.amount_minor * share.num) / share.den;
}

/**
 * The same monthly value in twelfths of a minor unit: an integer for every tier (each share's
 * denominator divides 12), so sums of them are exact in any order, in the process or in SQL.
 */
export function monthlyTwelfths(p: PeriodPrice): number {
  const share = MONTHLY_SHARE[p.tier];
  return (p.amount_minor * share.num * 12) / share.den;
}

/**
 * The start of the k-th billing period of a stretch that began at `anchor`: counted from the
 * anchor each time, so a subscription started on the 31st bills on the last day of shorter
 * months and on the 31st again after them.
 */
export function chargeAt(anchor: number, k: number, tier: Tier): number {
  if (tier === 'weekly') return anchor + k * 7 * 86_400_000;
  return addMonths(anchor, k * (tier === 'monthly' ? 1 : tier === 'quarterly' ? 3 : 12));
}

/** A stretch of time in one status on one product: [from, to), `to` null while it lasts. */
export interface Segment {
  from: number;
  to: number | null;
  status: SubscriptionStatus;
  product_id: string | null;
  price: PeriodPrice | null;
  /** The monthly value while paying and priced, else 0. */
  mrr: number;
  /** `mrr` in twelfths of a minor unit (an integer): what the charts add up. */
  mrr12: number;
}

export function segments(h: SubscriptionHistory, catalogue: Catalogue): Segment[] {
  return h.steps.map((s, i) => {
    const price = priceFor(catalogue, s.product_id, h.country);
    return {
      from: s.at,
      to: i + 1 < h.steps.length ? h.steps[i + 1].at : null,
      status: s.status,
      product_id: s.product_id,
      price,
      mrr: isPaying(s.status) && price ? monthlyValue(price) : 0,
      mrr12: isPaying(s.status) && price ? monthlyTwelfths(price) : 0,
    };
  });
}

export const MOVEMENT_KINDS = ['new', 'expansion', 'contraction', 'churned', 'reactivated'] as const;
export type MovementKind = (typeof MOVEMENT_KINDS)[number];

/** A change of MRR, signed, in one currency. */
export interface Movement {
  at: number;
  kind: MovementKind;
  currency: string;
  delta: number;
  /** `delta` in twelfths of a minor unit (an integer). */
  delta12: number;
}

/**
 * MRR movements: starting to pay is `new` the first time and `reactivated` after any earlier
 * paid stretch (a payment recovered after a billing retry too); stopping is `churned`; a change
 * of value while paying (an upgrade, a downgrade, a price of another tier) is `expansion` or
 * `contraction`. A move to a price in another currency is churn in the old currency and a
 * reactivation in the new one: the two are never netted.
 */
export function movements(segs: readonly Segment[]): Movement[] {
  const out: Movement[] = [];
  let prev: { currency: string; mrr: number; mrr12: number } | null = null;
  let paidBefore = false;
  for (const s of segs) {
    const next = s.mrr12 > 0 && s.price ? { currency: s.price.currency, mrr: s.mrr, mrr12: s.mrr12 } : null;
    if (prev && next && prev.currency === next.currency) {
      if (next.mrr12 !== prev.mrr12)
        out.push({
          at: s.from,
          kind: next.mrr12 > prev.mrr12 ? 'expansion' : 'contraction',
          currency: next.currency,
          delta: next.mrr - prev.mrr,
          delta12: next.mrr12 - prev.mrr12,
        });
    } else {
      if (prev)
        out.push({ at: s.from, kind: 'churned', currency: prev.currency, delta: -prev.mrr, delta12: -prev.mrr12 });
      if (next)
        out.push({
          at: s.from,
          kind: paidBefore ? 'reactivated' : 'new',
          currency: next.currency,
          delta: next.mrr,
          delta12: next.mrr12,
        });
    }
    if (next) paidBefore = true;
    prev = next;
  }
  return out;
}

/** A charge (positive) or a refund (negative), in minor units of one currency. */
export interface Money {
  at: number;
  currency: string;
  amount_minor: number;
  /** The product charged (or refunded). */
  product_id: string | null;
}

/**
 * Realized revenue: the charges the billing cadence implies, one at the start of each paid
 * stretch (a conversion, a new purchase, a recovered payment, a change of product) and one per
 * billing period after it while the stretch lasts, up to `until`. A refund takes back one
 * period's price of the stretch it ends, when it happens (which may be another month). The
 * service records statuses, not each charge; docs/charts.md says what that means.
 */
export function revenue(segs: readonly Segment[], until: number): Money[] {
  const out: Money[] = [];
  let lastPaid: Segment | null = null;
  for (const s of segs) {
    if (s.status === 'refunded' && lastPaid?.price) {
      const { currency, amount_minor } = lastPaid.price;
      out.push({ at: s.from, currency, amount_minor: -amount_minor, product_id: lastPaid.product_id });
      lastPaid = null;
      continue;
    }
    if (!isPaying(s.status) || !s.price) continue;
    const end = Math.min(s.to ?? until, until);
    for (let k = 0, t = s.from; t < end; t = chargeAt(s.from, ++k, s.price.tier)) {
      out.push({ at: t, currency: s.price.currency, amount_minor: s.price.amount_minor, product_id: s.product_id });
    }
    lastPaid = s;
  }
  return out;
}

/**
 * When the realized revenue of these segments next grows with time alone: the next charge of
 * the open paid stretch at or after `until` (the charges before it are in `revenue(segs, until)`);
 * null when the last stretch is not an open, paid, priced one.
 */
export function nextCharge(segs: readonly Segment[], until: number): number | null {
  const s = segs[segs.length - 1];
  if (!s || s.to !== null || !isPaying(s.status) || !s.price) return null;
  let k = 0;
  let t = s.from;
  while (t < until) t = chargeAt(s.from, ++k, s.price.tier);
  return t;
}

/** A trial and what became of it: the first trial of the subscription, and its first payment after it. */
export interface Trial {
  started: number;
  converted: number | null;
}

export function trial(h: SubscriptionHistory): Trial | null {
  const i = h.steps.findIndex((s) => s.status === 'trialing');
  if (i < 0) return null;
  const paid = h.steps.slice(i + 1).find((s) => isPaying(s.status));
  return { started: h.steps[i].at, converted: paid ? paid.at : null };
}

/** When the subscription first paid, or null. */
export function firstPaid(h: SubscriptionHistory): number | null {
  return h.steps.find((s) => isPaying(s.status))?.at ?? null;
}

/** Refunds: each move into `refunded`. */
export const refunds = (h: SubscriptionHistory): number[] =>
  h.steps.filter((s, i) => s.status === 'refunded' && h.steps[i - 1]?.status !== 'refunded').map((s) => s.at);

/**
 * A history from its two records: the status moves and the product moves (each oldest first,
 * times in epoch ms). A step for every status move, with the product in force then; a product
 * move while the status holds is a step of its own. Moves at the same instant (one write) are
 * one step. Before the first product move, the record's present product is assumed.
 */
export function mergeMoves(
  statuses: readonly { at: number; status: SubscriptionStatus }[],
  products: readonly { at: number; product_id: string | null }[],
  present: string | null,
): HistoryStep[] {
  const steps: HistoryStep[] = [];
  let product = products[0]?.product_id ?? present;
  let i = 0;
  let j = 0;
  while (i < statuses.length || j < products.length) {
    const t = Math.min(statuses[i]?.at ?? Infinity, products[j]?.at ?? Infinity);
    let productMoved = false;
    for (; j < products.length && products[j].at === t; j++) {
      productMoved ||= products[j].product_id !== product;
      product = products[j].product_id;
    }
    const before = i;
    for (; i < statuses.length && statuses[i].at === t; i++)
      steps.push({ at: t, status: statuses[i].status, product_id: product });
    const last = steps[steps.length - 1];
    if (i === before && productMoved && last) steps.push({ at: t, status: last.status, product_id: product });
  }
  return steps;
}
