import { MOVEMENT_KINDS } from './history';
import type { ChartData, ChartName, ChartSeries, CohortRow } from './chart-list';
import type { DayMeasure, Measures } from './facts';
import { addMonths, dayOf, periodIndex, periodStart, type Period, type Resolution } from './periods';
import { currencyPlan, type RateBook } from './rates';
import {
  cohortCustomersSeries,
  ratio,
  refundRateSeries,
  revenueChurnSeries,
  revenuePerCustomerSeries,
  subscriptionChurnSeries,
  trialConversionSeries,
} from './series';

/**
 * A chart from the summed facts of domain/charts/facts.ts (the rows the worker's fold job keeps,
 * summed over the subscriptions a filter keeps): the same figures as `computeChart` over every
 * history (the tests' reference, test/helpers/chart-reference.ts), from a number of rows
 * bounded by days × currencies. Pure.
 */

/**
 * One day's sums, per currency ('' for counts) and group (the provider, country or product SKU a
 * chart splits by; else '').
 */
export interface DaySum {
  day: string;
  currency: string;
  group: string;
  m: Measures;
}

/** The retention facts of a cohort month, summed. */
export interface RetentionSum {
  cohort: string;
  month: string;
  size: number;
  retained: number;
}

/** A customer cohort day's LTV facts, summed. */
export interface LtvSum {
  day: string;
  currency: string;
  customers: number;
  revenue: number;
  items: number;
}

export interface SumsInput {
  days: readonly DaySum[];
  retention: readonly RetentionSum[];
  ltv: readonly LtvSum[];
  periods: readonly Period[];
  resolution: Resolution;
  /** Epoch ms: the end of what the sums know. */
  now: number;
  /** Convert money into this currency (docs/charts.md, "Currencies"), with these rates. */
  convert?: { to: string; rates: RateBook };
}

export interface SummedChart extends ChartData {
  /** With `convert`: the currencies left as they are because a period has no rate for them. */
  unconverted?: string[];
}

const v = (m: Measures, k: DayMeasure) => m[k] ?? 0;

/** The day each period is read at: its last day, or today for the one in progress; null for one to come. */
const readDays = (input: Pick<SumsInput, 'periods' | 'now'>) =>
  input.periods.map((p) => (p.start > input.now ? null : dayOf(Math.min(p.end - 1, input.now))));

/**
 * Which days a chart can tell apart, for a reader that adds day sums up before they reach it
 * (db/chart-sums.ts): a chart reads a level at a period's read day or on the day before its
 * start, and sums a flow per period. So the days of a period up to its read day can be one row
 * dated at its start, and every day before the first period one row on the day before it; a
 * later day (after now, after the window) stays as it is. The chart is the same (the domain
 * test compares). `starts[i]` and `reads[i]` are period i's first and read days.
 */
export interface DayCompaction {
  before: string;
  starts: string[];
  reads: (string | null)[];
}

export function dayCompaction(periods: readonly Period[], now: number): DayCompaction {
  return {
    before: dayOf(periods[0].start - 86_400_000),
    starts: periods.map((p) => dayOf(p.start)),
    reads: readDays({ periods, now }),
  };
}

/** The day a day's sums can be added into (`dayCompaction`); the same rule db/chart-sums.ts writes in SQL. */
export function compactDay(c: DayCompaction, day: string): string {
  let b = 0;
  while (b < c.starts.length && c.starts[b] <= day) b++;
  if (b === 0) return c.before;
  const read = c.reads[b - 1];
  return read !== null && day <= read ? c.starts[b - 1] : day;
}

/** Levels at the given days (null stays null): every change up to and including the day, per key. */
function levelsAt(
  input: SumsInput,
  days: readonly (string | null)[],
  value: (r: DaySum) => { key: string; v: number } | null,
): Map<string, (number | null)[]> {
  const changes = new Map<string, Map<string, number>>();
  for (const r of input.days) {
    const kv = value(r);
    if (!kv || kv.v === 0) continue;
    let c = changes.get(kv.key);
    if (!c) changes.set(kv.key, (c = new Map()));
    c.set(r.day, (c.get(r.day) ?? 0) + kv.v);
  }
  const out = new Map<string, (number | null)[]>();
  for (const [key, c] of changes) {
    const sorted = [...c.entries()].sort(([a], [b]) => a.localeCompare(b));
    let i = 0;
    let run = 0;
    out.set(
      key,
      days.map((d) => {
        if (d === null) return null;
        for (; i < sorted.length && sorted[i][0] <= d; i++) run += sorted[i][1];
        return run;
      }),
    );
  }
  return out;
}

/** Sums into the periods holding each row's day, per key. */
function bucketsOf(input: SumsInput, value: (r: DaySum) => { key: string; v: number } | null) {
  const sums = new Map<string, number[]>();
  for (const r of input.days) {
    const kv = value(r);
    if (!kv) continue;
    const i = periodIndex(input.periods, Date.parse(`${r.day}T00:00:00Z`));
    if (i < 0) continue;
    let a = sums.get(kv.key);
    if (!a) sums.set(kv.key, (a = new Array(input.periods.length).fill(0)));
    a[i] += kv.v;
  }
  return sums;
}

const future = (input: SumsInput, i: number) => input.periods[i].start > input.now;
const futureOf = (input: SumsInput) => (i: number) => future(input, i);
const withFuture = (input: SumsInput, vals: readonly (number | null)[] | undefined) =>
  input.periods.map((_, i) => (future(input, i) ? null : (vals?.[i] ?? 0)));

/**
 * Money per currency and period, brought into the chart's currencies: as they are, or with
 * `convert`, every currency with a rate for every period to come converted into the target (each
 * period at its own rate) and added to it; a currency missing a rate stays apart, named.
 */
function converter(input: SumsInput, currencies: readonly string[]) {
  const plan = currencyPlan(input.periods, input.now, currencies, input.convert);
  return {
    unconverted: plan.unconverted,
    into: plan.into,
    /** The output currencies, sorted. */
    currencies: plan.currencies,
    /** Per output currency, the sum of the inputs' values (exact, not rounded). */
    apply(vals: ReadonlyMap<string, readonly (number | null)[]>): Map<string, (number | null)[]> {
      const out = new Map<string, (number | null)[]>();
      for (const c of plan.currencies)
        out.set(
          c,
          input.periods.map((_, i) => (future(input, i) ? null : 0)),
        );
      for (const [c, xs] of vals) {
        const target = plan.into(c);
        const o = out.get(target)!;
        xs.forEach((x, i) => {
          if (x !== null && o[i] !== null) o[i] = o[i]! + x * plan.factor(c, i);
        });
      }
      return out;
    },
  };
}

function summary(input: SumsInput, series: ChartSeries[], unconverted?: string[], cohorts?: CohortRow[]): SummedChart {
  return {
    periods: input.periods.map((p) => p.label),
    series,
    ...(cohorts ? { cohorts } : {}),
    ...(input.convert ? { unconverted: unconverted ?? [] } : {}),
  };
}

function mrrChart(input: SumsInput, factor: number, name: string): SummedChart {
  const levels = levelsAt(input, readDays(input), (r) => (r.currency ? { key: r.currency, v: v(r.m, 'mrr12') } : null));
  // A currency is drawn when one of its stretches is counted at a read time (every stretch adds a positive value).
  for (const [c, xs] of levels) if (!xs.some((x) => x !== null && x > 0)) levels.delete(c);
  const conv = converter(input, [...levels.keys()]);
  const merged = conv.apply(levels);
  return summary(
    input,
    conv.currencies.map((currency) => ({
      key: currency,
      label: `${name} (${currency})`,
      unit: 'money' as const,
      currency,
      values: merged.get(currency)!.map((x) => (x === null ? null : Math.round((x * factor) / 12))),
    })),
    conv.unconverted,
  );
}

const MOVEMENT_MEASURES = MOVEMENT_KINDS.map((k) => [k, `${k}12`] as const);

function movementChart(input: SumsInput): SummedChart {
  const present = new Set<string>();
  for (const r of input.days) if (MOVEMENT_MEASURES.some(([, m]) => v(r.m, m) !== 0)) present.add(r.currency);
  const conv = converter(input, [...present]);
  const per = new Map<string, Map<string, (number | null)[]>>();
  for (const [kind, measure] of MOVEMENT_MEASURES) {
    const b = bucketsOf(input, (r) => (r.currency ? { key: r.currency, v: v(r.m, measure) } : null));
    per.set(kind, conv.apply(new Map([...b].filter(([c]) => present.has(c)))));
  }
  const series: ChartSeries[] = [];
  for (const currency of conv.currencies) {
    for (const kind of [...MOVEMENT_KINDS, 'net'] as const) {
      const vals = input.periods.map((_, i) => {
        if (future(input, i)) return null;
        const of = (k: string) => per.get(k)!.get(currency)![i] ?? 0;
        return Math.round((kind === 'net' ? MOVEMENT_KINDS.reduce((s, k) => s + of(k), 0) : of(kind)) / 12);
      });
      series.push({
        key: `${kind}:${currency}`,
        label: `${kind} (${currency})`,
        unit: 'money',
        currency,
        values: vals,
      });
    }
  }
  return summary(input, series, conv.unconverted);
}

function countChart(input: SumsInput, label: string, measure: DayMeasure): SummedChart {
  const vals = levelsAt(input, readDays(input), (r) => ({ key: 'n', v: v(r.m, measure) })).get('n');
  return summary(input, [{ key: 'count', label, unit: 'count', currency: null, values: withFuture(input, vals) }]);
}

function trialConversion(input: SumsInput): SummedChart {
  const b = bucketsOf(input, (r) => ({ key: 'trials', v: v(r.m, 'trials') }));
  const c = bucketsOf(input, (r) => ({ key: 'converted', v: v(r.m, 'converted') }));
  const n = input.periods.length;
  return summary(input, trialConversionSeries(n, futureOf(input), b.get('trials'), c.get('converted')));
}

function churnRate(input: SumsInput): SummedChart {
  const churned = bucketsOf(input, (r) => ({ key: 'n', v: v(r.m, 'churned') })).get('n');
  const lost = bucketsOf(input, (r) =>
    r.currency ? { key: r.currency, v: -(v(r.m, 'churned12') + v(r.m, 'contraction12')) } : null,
  );
  // The level at each period's start: every change up to the day before it.
  const starts = input.periods.map((p, i) => (future(input, i) ? null : dayOf(p.start - 1)));
  const paying = levelsAt(input, starts, (r) => ({ key: 'n', v: v(r.m, 'priced') })).get('n');
  const mrrAtStart = levelsAt(input, starts, (r) => (r.currency ? { key: r.currency, v: v(r.m, 'mrr12') } : null));
  const currencies = new Set<string>();
  for (const r of input.days)
    if (r.currency && (v(r.m, 'churned12') !== 0 || v(r.m, 'contraction12') !== 0)) currencies.add(r.currency);
  for (const [c, xs] of mrrAtStart) if (xs.some((x) => x !== null && x > 0)) currencies.add(c);
  const conv = converter(input, [...currencies]);
  const lostBy = conv.apply(new Map([...lost].filter(([c]) => currencies.has(c))));
  const startBy = conv.apply(new Map([...mrrAtStart].filter(([c]) => currencies.has(c))));
  const n = input.periods.length;
  const series: ChartSeries[] = [subscriptionChurnSeries(n, futureOf(input), churned, paying)];
  for (const currency of conv.currencies)
    series.push(revenueChurnSeries(n, futureOf(input), currency, lostBy.get(currency), startBy.get(currency)));
  return summary(input, series, conv.unconverted);
}

function refundRate(input: SumsInput): SummedChart {
  const refunds = bucketsOf(input, (r) => ({ key: 'n', v: v(r.m, 'refunds') })).get('n');
  const charges = bucketsOf(input, (r) => ({ key: 'n', v: v(r.m, 'charges') })).get('n');
  return summary(input, refundRateSeries(input.periods.length, futureOf(input), refunds, charges));
}

function ltv(input: SumsInput): SummedChart {
  const size = new Array<number>(input.periods.length).fill(0);
  const money = new Map<string, number[]>();
  const currencies = new Set<string>();
  for (const r of input.ltv) {
    if (r.currency && r.items > 0) currencies.add(r.currency);
    const i = periodIndex(input.periods, Date.parse(`${r.day}T00:00:00Z`));
    if (i < 0) continue;
    size[i] += r.customers;
    if (!r.currency) continue;
    let a = money.get(r.currency);
    if (!a) money.set(r.currency, (a = new Array(input.periods.length).fill(0)));
    a[i] += r.revenue;
  }
  const conv = converter(input, [...currencies]);
  const merged = conv.apply(new Map([...money].filter(([c]) => currencies.has(c))));
  const n = input.periods.length;
  const series: ChartSeries[] = [cohortCustomersSeries(n, futureOf(input), size)];
  for (const currency of conv.currencies)
    series.push(revenuePerCustomerSeries(n, futureOf(input), currency, size, merged.get(currency)));
  return summary(input, series, conv.unconverted);
}

function retention(input: SumsInput): SummedChart {
  const months: Period[] = [];
  if (input.periods.length > 0) {
    const last = input.periods[input.periods.length - 1].end;
    for (let s = periodStart(input.periods[0].start, 'month'); s < last; s = addMonths(s, 1))
      months.push({ label: dayOf(s), start: s, end: addMonths(s, 1) });
  }
  const index = new Map(months.map((m, i) => [m.label, i]));
  const size = new Array<number>(months.length).fill(0);
  // Per cohort in range, the retained changes by month since the cohort (months before the range's end).
  const changes = months.map(() => new Array<number>(months.length).fill(0));
  for (const r of input.retention) {
    const c = index.get(r.cohort);
    if (c === undefined) continue;
    size[c] += r.size;
    const k = index.get(r.month);
    if (k !== undefined) changes[c][k - c] += r.retained;
  }
  const cohorts: CohortRow[] = months.map((m, c) => {
    let run = 0;
    return {
      cohort: m.label,
      size: size[c],
      values: months.slice(c).map((mk, k) => {
        run += changes[c][k];
        return mk.start > input.now ? null : ratio(run, size[c]);
      }),
    };
  });
  return {
    periods: months.map((m) => m.label),
    series: [
      {
        key: 'size',
        label: 'Cohort size',
        unit: 'count',
        currency: null,
        values: size.map((n, i) => (months[i].start > input.now ? null : n)),
      },
    ],
    cohorts,
    ...(input.convert ? { unconverted: [] } : {}),
  };
}

function revenueBy(input: SumsInput): SummedChart {
  // A (group, currency) is drawn when a charge or a refund of it falls in the periods.
  const items = bucketsOf(input, (r) => (r.currency ? { key: `${r.group}\n${r.currency}`, v: v(r.m, 'items') } : null));
  const present = [...items].filter(([, xs]) => xs.some((x) => x > 0)).map(([k]) => k);
  const sums = bucketsOf(input, (r) =>
    r.currency ? { key: `${r.group}\n${r.currency}`, v: v(r.m, 'revenue') } : null,
  );
  const conv = converter(input, [...new Set(present.map((k) => k.split('\n')[1]))]);
  const byGroup = new Map<string, Map<string, number[]>>();
  for (const k of present) {
    const [group, currency] = k.split('\n');
    const g = byGroup.get(group) ?? new Map<string, number[]>();
    g.set(currency, sums.get(k) ?? new Array(input.periods.length).fill(0));
    byGroup.set(group, g);
  }
  const series: ChartSeries[] = [];
  for (const [group, vals] of byGroup) {
    const merged = conv.apply(vals);
    for (const currency of new Set([...vals.keys()].map((c) => conv.into(c)))) {
      series.push({
        key: `${group}:${currency}`,
        label: `${group} (${currency})`,
        unit: 'money',
        currency,
        values: merged.get(currency)!.map((x) => (x === null ? null : Math.round(x))),
      });
    }
  }
  series.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return summary(input, series, conv.unconverted);
}

/** The day measures each chart reads (the others it never looks at). */
export const CHART_MEASURES: Record<Exclude<ChartName, 'ltv' | 'retention'>, readonly DayMeasure[]> = {
  mrr: ['mrr12'],
  arr: ['mrr12'],
  mrr_movement: ['new12', 'expansion12', 'contraction12', 'churned12', 'reactivated12'],
  active_subscriptions: ['paying'],
  active_trials: ['trialing'],
  trial_conversion: ['trials', 'converted'],
  churn_rate: ['churned', 'churned12', 'contraction12', 'priced', 'mrr12'],
  refund_rate: ['refunds', 'charges'],
  revenue_by_provider: ['revenue', 'items'],
  revenue_by_product: ['revenue', 'items'],
  revenue_by_country: ['revenue', 'items'],
};

export function chartFromSums(name: ChartName, input: SumsInput): SummedChart {
  switch (name) {
    case 'mrr':
      return mrrChart(input, 1, 'MRR');
    case 'arr':
      return mrrChart(input, 12, 'ARR');
    case 'mrr_movement':
      return movementChart(input);
    case 'active_subscriptions':
      return countChart(input, 'Active subscriptions', 'paying');
    case 'active_trials':
      return countChart(input, 'Active trials', 'trialing');
    case 'trial_conversion':
      return trialConversion(input);
    case 'churn_rate':
      return churnRate(input);
    case 'refund_rate':
      return refundRate(input);
    case 'ltv':
      return ltv(input);
    case 'retention':
      return retention(input);
    case 'revenue_by_provider':
    case 'revenue_by_product':
    case 'revenue_by_country':
      return revenueBy(input);
  }
}
