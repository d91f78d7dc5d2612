import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CHARTS, type ChartName } from '../../domain/charts/chart-list';
import { computeChart } from '../helpers/chart-reference';
import { customerFacts, subscriptionFacts, type CustomerSubscription } from '../../domain/charts/facts';
import { chartFromSums, compactDay, dayCompaction, type DaySum } from '../../domain/charts/from-sums';
import type { Catalogue, HistoryStep, SubscriptionHistory } from '../../domain/charts/history';
import { periodsBetween, RESOLUTIONS, type Resolution } from '../../domain/charts/periods';
import { sumFacts, type FiledFacts, type Split } from '../../domain/charts/sum-facts';
import { SUBSCRIPTION_STATUSES } from '../../domain/subscription';

/**
 * The charts from summed facts (what the fold job keeps and a chart reads) equal the full
 * computation over every history (test/helpers/chart-reference.ts, the reference), for random tenants: random
 * catalogues (several currencies and tiers, a product without a price), random histories
 * (every status, product moves, moves at the same instant), customers with several
 * subscriptions across providers, countries and modes, and every filter.
 */
const DAY = 86_400_000;
const NOW = Date.parse('2026-06-17T13:45:00Z');
const START = NOW - 800 * DAY;

const catalogue: Catalogue = new Map([
  ['p_week', { sku: 'week', tier: 'weekly', prices: [{ country: 'US', currency: 'USD', amount_minor: 499 }] }],
  [
    'p_month',
    {
      sku: 'month',
      tier: 'monthly',
      prices: [
        { country: 'DE', currency: 'EUR', amount_minor: 999 },
        { country: 'JP', currency: 'JPY', amount_minor: 1200 },
        { country: 'US', currency: 'USD', amount_minor: 1099 },
      ],
    },
  ],
  [
    'p_quarter',
    { sku: 'quarter', tier: 'quarterly', prices: [{ country: 'DE', currency: 'EUR', amount_minor: 2501 }] },
  ],
  [
    'p_year',
    {
      sku: 'year',
      tier: 'annual',
      prices: [
        { country: 'US', currency: 'USD', amount_minor: 7001 },
        { country: 'DE', currency: 'EUR', amount_minor: 6007 },
      ],
    },
  ],
  ['p_free', { sku: 'free', tier: null, prices: [] }],
]);
const PRODUCTS = ['p_week', 'p_month', 'p_quarter', 'p_year', 'p_free', 'p_gone'];

const step = fc.record({
  gap: fc.oneof(fc.integer({ min: 0, max: 60 * DAY }), fc.constant(0), fc.integer({ min: 0, max: 3 * DAY })),
  status: fc.constantFrom(...SUBSCRIPTION_STATUSES),
  product: fc.option(fc.constantFrom(...PRODUCTS), { freq: 8 }),
});
const sub = fc.record({
  born: fc.integer({ min: START, max: NOW }),
  steps: fc.array(step, { minLength: 1, maxLength: 7 }),
  customer: fc.integer({ min: 0, max: 12 }),
  provider: fc.constantFrom('psp_a', 'psp_b', 'store_ios'),
  country: fc.constantFrom('DE', 'US', 'JP', 'FR', null),
  mode: fc.constantFrom('live', 'live', 'test'),
  present: fc.option(fc.constantFrom(...PRODUCTS), { freq: 8 }),
});

interface Generated {
  history: SubscriptionHistory;
  mode: string;
  present: string | null;
}

type Raw = typeof sub extends fc.Arbitrary<infer T> ? T : never;

function build(raw: Raw[]): Generated[] {
  return raw.map((r, i) => {
    let at = r.born;
    const steps: HistoryStep[] = [];
    for (const s of r.steps) {
      at += s.gap;
      if (at > NOW) break;
      steps.push({ at, status: s.status, product_id: s.product });
    }
    if (steps.length === 0) steps.push({ at: r.born, status: r.steps[0].status, product_id: r.steps[0].product });
    return {
      history: { id: `s${i}`, customer: `c${r.customer}`, provider: r.provider, country: r.country, steps },
      mode: r.mode,
      present: r.present,
    };
  });
}

/** What the fold job files for a tenant: each subscription's facts and each customer's LTV facts. */
function file(tenant: Generated[]): { filed: FiledFacts[]; ltv: ReturnType<typeof customerFacts> } {
  const filed: FiledFacts[] = tenant.map((g) => ({
    mode: g.mode,
    provider: g.history.provider,
    product: g.present ?? '',
    country: g.history.country ?? '',
    facts: subscriptionFacts(g.history, catalogue, NOW),
  }));
  const byCustomer = new Map<string, CustomerSubscription[]>();
  filed.forEach((f, i) => {
    const g = tenant[i];
    const list = byCustomer.get(g.history.customer) ?? [];
    list.push({ ...f, history: g.history });
    byCustomer.set(g.history.customer, list);
  });
  const ltv = [...byCustomer.values()].flatMap((subs) => customerFacts(subs, catalogue, NOW));
  return { filed, ltv };
}

function compare(
  tenant: Generated[],
  { filed, ltv }: ReturnType<typeof file>,
  name: ChartName,
  resolution: Resolution,
  from: string,
  to: string,
  filter: { mode: string; provider?: string; product?: string; country?: string },
) {
  const periods = periodsBetween(from, to, resolution);
  const kept = tenant.filter(
    (g) =>
      g.mode === filter.mode &&
      (!filter.provider || g.history.provider === filter.provider) &&
      (!filter.product || g.present === filter.product) &&
      (!filter.country || g.history.country === filter.country),
  );
  const reference = computeChart(name, {
    histories: kept.map((g) => g.history),
    catalogue,
    periods,
    resolution,
    now: NOW,
  });
  const split: Split =
    name === 'revenue_by_provider'
      ? 'provider'
      : name === 'revenue_by_country'
        ? 'country'
        : name === 'revenue_by_product'
          ? 'product'
          : null;
  const sums = sumFacts(filed, ltv, filter, split, catalogue);
  const summed = chartFromSums(name, { ...sums, periods, resolution, now: NOW });
  expect(summed, `${name} ${resolution} ${from}..${to} ${JSON.stringify(filter)}`).toEqual(reference);
  // The days a chart cannot tell apart added up first (what db/chart-sums.ts does in SQL): the same chart.
  const compacted = chartFromSums(name, { ...sums, days: compact(sums.days, periods), periods, resolution, now: NOW });
  expect(compacted, `compacted ${name} ${resolution} ${from}..${to} ${JSON.stringify(filter)}`).toEqual(reference);
}

function compact(days: readonly DaySum[], periods: ReturnType<typeof periodsBetween>): DaySum[] {
  const c = dayCompaction(periods, NOW);
  const out = new Map<string, DaySum>();
  for (const d of days) {
    const day = compactDay(c, d.day);
    const key = `${day}\n${d.currency}\n${d.group}`;
    const r = out.get(key) ?? { day, currency: d.currency, group: d.group, m: {} };
    for (const [m, x] of Object.entries(d.m)) r.m[m as keyof typeof d.m] = (r.m[m as keyof typeof d.m] ?? 0) + x;
    out.set(key, r);
  }
  for (const r of out.values())
    for (const [m, x] of Object.entries(r.m)) if (x === 0) delete r.m[m as keyof typeof r.m];
  return [...out.values()];
}

describe('charts from summed facts equal the full computation', () => {
  it('for every chart, resolution and filter over random tenants', () => {
    fc.assert(
      fc.property(
        fc.array(sub, { minLength: 0, maxLength: 40 }),
        fc.constantFrom(...RESOLUTIONS),
        fc.integer({ min: 0, max: 700 }),
        fc.integer({ min: 0, max: 300 }),
        fc.record({
          mode: fc.constantFrom('live', 'test'),
          provider: fc.option(fc.constantFrom('psp_a', 'store_ios'), { nil: undefined, freq: 2 }),
          product: fc.option(fc.constantFrom('p_month', 'p_year'), { nil: undefined, freq: 3 }),
          country: fc.option(fc.constantFrom('DE', 'US'), { nil: undefined, freq: 3 }),
        }),
        (raw, resolution, back, span, filter) => {
          const tenant = build(raw);
          const fromT = NOW - back * DAY;
          const days = resolution === 'day' ? Math.min(span, 200) : span;
          const from = new Date(fromT).toISOString().slice(0, 10);
          const to = new Date(fromT + days * DAY).toISOString().slice(0, 10);
          // Filed once per tenant, as the fold job does, then read by every chart.
          const filed = file(tenant);
          for (const c of CHARTS) compare(tenant, filed, c.name, resolution, from, to, filter);
        },
      ),
      { numRuns: 150, seed: 20261126 },
    );
  });
});
