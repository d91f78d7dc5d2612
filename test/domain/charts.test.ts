import { describe, expect, it } from 'vitest';
import type { ChartName } from '../../domain/charts/chart-list';
import { computeChart } from '../helpers/chart-reference';
import {
  mergeMoves,
  movements,
  revenue,
  segments,
  trial,
  type Catalogue,
  type HistoryStep,
  type SubscriptionHistory,
} from '../../domain/charts/history';
import { periodsBetween, type Resolution } from '../../domain/charts/periods';

/** Small hand-made histories: a basic and a pro monthly plan in EUR, an annual plan in USD. */
const catalogue: Catalogue = new Map([
  ['basic', { sku: 'basic', tier: 'monthly', prices: [{ country: 'DE', currency: 'EUR', amount_minor: 500 }] }],
  ['pro', { sku: 'pro', tier: 'monthly', prices: [{ country: 'DE', currency: 'EUR', amount_minor: 1500 }] }],
  [
    'yearly',
    {
      sku: 'yearly',
      tier: 'annual',
      prices: [
        { country: 'US', currency: 'USD', amount_minor: 12000 },
        { country: 'DE', currency: 'EUR', amount_minor: 6000 },
      ],
    },
  ],
  ['free', { sku: 'free', tier: null, prices: [] }],
]);

const t = (iso: string) => Date.parse(iso.length === 10 ? `${iso}T12:00:00Z` : iso);
const step = (at: string, status: HistoryStep['status'], product_id: string | null = 'basic'): HistoryStep => ({
  at: t(at),
  status,
  product_id,
});
let n = 0;
const history = (steps: HistoryStep[], extra: Partial<SubscriptionHistory> = {}): SubscriptionHistory => ({
  id: `sub_${++n}`,
  customer: `cus_${n}`,
  provider: 'psp_a',
  country: 'DE',
  steps,
  ...extra,
});
const chart = (
  name: ChartName,
  histories: SubscriptionHistory[],
  from: string,
  to: string,
  resolution: Resolution = 'month',
  now = '2026-06-30',
) =>
  computeChart(name, { histories, catalogue, periods: periodsBetween(from, to, resolution), resolution, now: t(now) });
const values = (c: ReturnType<typeof chart>, key: string) => c.series.find((s) => s.key === key)?.values;

describe('MRR movements of one subscription', () => {
  it('an upgrade is expansion and a downgrade contraction, by the difference in monthly value', () => {
    const h = history([
      step('2026-01-05', 'active', 'basic'),
      step('2026-02-10', 'active', 'pro'),
      step('2026-03-10', 'active', 'basic'),
    ]);
    expect(movements(segments(h, catalogue)).map((m) => [m.kind, m.delta])).toEqual([
      ['new', 500],
      ['expansion', 1000],
      ['contraction', -1000],
    ]);
  });

  it('paying again after a stop is reactivation, not new; a billing retry that recovers is churn then reactivation', () => {
    const h = history([
      step('2026-01-05', 'active'),
      step('2026-02-05', 'canceled'),
      step('2026-04-01', 'active'),
      step('2026-05-01', 'past_due'),
      step('2026-05-03', 'active'),
    ]);
    expect(movements(segments(h, catalogue)).map((m) => m.kind)).toEqual([
      'new',
      'churned',
      'reactivated',
      'churned',
      'reactivated',
    ]);
  });

  it('an annual price counts a twelfth a month; a move to another currency is never netted', () => {
    const h = history([step('2026-01-05', 'active', 'basic'), step('2026-02-05', 'active', 'yearly')], {
      country: 'US',
    });
    expect(movements(segments(h, catalogue)).map((m) => [m.kind, m.currency, m.delta])).toEqual([
      ['new', 'EUR', 500],
      ['churned', 'EUR', -500],
      ['reactivated', 'USD', 1000],
    ]);
  });

  it('a trial is worth nothing until it pays; a product without a price moves nothing', () => {
    expect(movements(segments(history([step('2026-01-01', 'trialing')]), catalogue))).toEqual([]);
    expect(movements(segments(history([step('2026-01-01', 'active', 'free')]), catalogue))).toEqual([]);
  });
});

describe('realized revenue', () => {
  it('charges at the start of each billing period while paying, and a refund in another month takes one back then', () => {
    const h = history([step('2026-01-31', 'active'), step('2026-04-15', 'refunded')]);
    const money = revenue(segments(h, catalogue), t('2026-06-30'));
    expect(money.map((m) => [new Date(m.at).toISOString().slice(0, 10), m.amount_minor])).toEqual([
      ['2026-01-31', 500],
      ['2026-02-28', 500], // month ends are clamped, not skipped
      ['2026-03-31', 500],
      ['2026-04-15', -500],
    ]);
    const byMonth = chart('revenue_by_provider', [h], '2026-01-01', '2026-05-31');
    expect(values(byMonth, 'psp_a:EUR')).toEqual([500, 500, 500, -500, 0]);
    const refundsChart = chart('refund_rate', [h], '2026-01-01', '2026-05-31');
    expect(values(refundsChart, 'refunds')).toEqual([0, 0, 0, 1, 0]);
    expect(values(refundsChart, 'rate')).toEqual([0, 0, 0, null, null]);
  });

  it('per product and per country, each in its own currency', () => {
    const de = history([step('2026-03-01', 'active', 'yearly')]);
    const us = history([step('2026-03-02', 'active', 'yearly')], { country: 'US' });
    const unknown = history([step('2026-03-03', 'active', 'yearly')], { country: null });
    const c = chart('revenue_by_country', [de, us, unknown], '2026-03-01', '2026-03-31');
    expect(c.series.map((s) => [s.key, s.values])).toEqual([
      ['DE:EUR', [6000]],
      ['US:USD', [12000]],
      ['unknown:USD', [12000]], // an unknown country pays the product's first price
    ]);
    expect(chart('revenue_by_product', [de, us], '2026-03-01', '2026-03-31').series.map((s) => s.key)).toEqual([
      'yearly:EUR',
      'yearly:USD',
    ]);
  });
});

describe('trials', () => {
  it('a trial that converts in the next month counts in the cohort of the month it started', () => {
    const h = history([step('2026-01-28', 'trialing'), step('2026-02-04', 'active')]);
    expect(trial(h)).toEqual({ started: t('2026-01-28'), converted: t('2026-02-04') });
    const c = chart(
      'trial_conversion',
      [h, history([step('2026-01-10', 'trialing'), step('2026-01-17', 'expired')])],
      '2026-01-01',
      '2026-02-28',
    );
    expect(values(c, 'trials')).toEqual([2, 0]);
    expect(values(c, 'converted')).toEqual([1, 0]);
    expect(values(c, 'rate')).toEqual([0.5, null]);
  });

  it('active trials and active subscriptions are read at each period end', () => {
    const h = history([step('2026-01-28', 'trialing'), step('2026-02-04', 'active'), step('2026-03-20', 'canceled')]);
    expect(values(chart('active_trials', [h], '2026-01-01', '2026-03-31'), 'count')).toEqual([1, 0, 0]);
    expect(values(chart('active_subscriptions', [h], '2026-01-01', '2026-03-31'), 'count')).toEqual([0, 1, 0]);
  });
});

describe('levels and rates over periods', () => {
  const a = history([
    step('2026-01-05', 'active', 'basic'),
    step('2026-02-10', 'active', 'pro'),
    step('2026-03-10', 'canceled'),
  ]);
  const b = history([step('2026-01-20', 'active', 'basic')]);

  it('MRR and ARR at each period end, a period still to come is null', () => {
    expect(values(chart('mrr', [a, b], '2026-01-01', '2026-07-31'), 'EUR')).toEqual([
      1000,
      2000,
      500,
      500,
      500,
      500,
      null,
    ]);
    expect(values(chart('arr', [a, b], '2026-01-01', '2026-03-31'), 'EUR')).toEqual([12000, 24000, 6000]);
  });

  it('MRR movement sums per period and kind, and the net equals the change of MRR', () => {
    const c = chart('mrr_movement', [a, b], '2026-01-01', '2026-03-31');
    expect(values(c, 'new:EUR')).toEqual([1000, 0, 0]);
    expect(values(c, 'expansion:EUR')).toEqual([0, 1000, 0]);
    expect(values(c, 'churned:EUR')).toEqual([0, 0, -1500]);
    expect(values(c, 'net:EUR')).toEqual([1000, 1000, -1500]);
  });

  it('churn rate: churned over paying at the period start; revenue churn over MRR at the start', () => {
    const c = chart('churn_rate', [a, b], '2026-01-01', '2026-03-31');
    expect(values(c, 'subscriptions')).toEqual([null, 0, 0.5]);
    expect(values(c, 'revenue:EUR')).toEqual([null, 0, 0.75]);
  });

  it('weekly and daily periods', () => {
    expect(periodsBetween('2026-03-04', '2026-03-17', 'week').map((p) => p.label)).toEqual([
      '2026-03-02',
      '2026-03-09',
      '2026-03-16',
    ]);
    expect(values(chart('active_subscriptions', [b], '2026-01-19', '2026-01-21', 'day'), 'count')).toEqual([0, 1, 1]);
  });
});

describe('cohorts', () => {
  it('realized LTV: customers by the period of their first payment, revenue to date per customer', () => {
    const one = history([step('2026-01-05', 'active'), step('2026-03-05', 'canceled')], { customer: 'alice' });
    const two = history([step('2026-02-01', 'active', 'pro'), step('2026-02-20', 'refunded', 'pro')], {
      customer: 'alice',
    });
    const three = history([step('2026-01-20', 'active'), step('2026-02-20', 'canceled')], { customer: 'bob' });
    const c = chart('ltv', [one, two, three], '2026-01-01', '2026-02-28');
    expect(values(c, 'customers')).toEqual([2, 0]);
    // alice: 500 + 500 (basic) + 1500 − 1500 (pro, refunded); bob: 500 → 1500 / 2
    expect(values(c, 'ltv:EUR')).toEqual([750, null]);
  });

  it('retention: the share of a month cohort that paid in each month since', () => {
    const stays = history([step('2026-01-05', 'active')]);
    const leaves = history([step('2026-01-06', 'active'), step('2026-02-15', 'canceled')]);
    const c = chart(
      'retention',
      [stays, leaves, history([step('2026-02-02', 'active')])],
      '2026-01-01',
      '2026-04-30',
      'month',
      '2026-03-15',
    );
    expect(c.cohorts).toEqual([
      { cohort: '2026-01-01', size: 2, values: [1, 1, 0.5, null] },
      { cohort: '2026-02-01', size: 1, values: [1, 1, null] },
      { cohort: '2026-03-01', size: 0, values: [null, null] },
      { cohort: '2026-04-01', size: 0, values: [null] },
    ]);
  });
});

describe('a history from its status and product records', () => {
  it('a product move while paying is a step of its own; moves of one write are one step', () => {
    const steps = mergeMoves(
      [
        { at: 1, status: 'trialing' },
        { at: 5, status: 'active' },
        { at: 9, status: 'canceled' },
      ],
      [
        { at: 1, product_id: 'basic' },
        { at: 7, product_id: 'pro' },
        { at: 9, product_id: 'basic' },
      ],
      'basic',
    );
    expect(steps).toEqual([
      { at: 1, status: 'trialing', product_id: 'basic' },
      { at: 5, status: 'active', product_id: 'basic' },
      { at: 7, status: 'active', product_id: 'pro' },
      { at: 9, status: 'canceled', product_id: 'basic' },
    ]);
  });

  it('without product records the present product is assumed', () => {
    expect(mergeMoves([{ at: 1, status: 'active' }], [], 'pro')).toEqual([
      { at: 1, status: 'active', product_id: 'pro' },
    ]);
  });
});
