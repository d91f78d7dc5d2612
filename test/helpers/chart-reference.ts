import {
  MOVEMENT_KINDS,
  firstPaid,
  isPaying,
  movements,
  refunds,
  revenue,
  segments,
  trial,
  type Catalogue,
  type Money,
  type Segment,
  type SubscriptionHistory,
} from '../../domain/charts/history';
import { addMonths, periodIndex, periodStart, type Period, type Resolution } from '../../domain/charts/periods';
import type { ChartData, ChartName, CohortRow } from '../../domain/charts/chart-list';
import { readCatalogue, readFiledHistories, type ChartFilter } from '../../db/charts';
import type { TenantReader } from '../../db/tenant-read';
import {
  type ChartSeries,
  cohortCustomersSeries,
  ratio,
  refundRateSeries,
  revenueChurnSeries,
  revenuePerCustomerSeries,
  subscriptionChurnSeries,
  trialConversionSeries,
} from '../../domain/charts/series';

/**
 * The reference the chart sums are checked against: every chart computed in full from the
 * subscriptions' histories over a list of periods, straight from the definitions of
 * docs/charts.md. The service never runs it: it draws each chart from the fold's sums
 * (domain/charts/from-sums.ts over facts.ts), and test/domain/chart-sums.test.ts and
 * test/db/chart-sums.test.ts prove the two give the same figures; the bench compares their cost.
 * Pure: the caller reads the histories and the catalogue, and says what "now" is.
 */
export interface ChartSource {
  histories: SubscriptionHistory[];
  catalogue: Catalogue;
  /** The database's now() (epoch ms): what the read saw is known up to it. */
  now: number;
}

/** The reference's input: every history of the filtered subscriptions, the catalogue, now. */
export async function readChartSource(reader: TenantReader, filter: ChartFilter): Promise<ChartSource> {
  const histories = (await readFiledHistories(reader, filter)).map((f) => f.history);
  const catalogue = await readCatalogue(reader);
  const [{ now }] = await reader.rows('select extract(epoch from now())::float8 * 1000 as now', []);
  return { histories, catalogue, now: Number(now) };
}

export interface ChartInput {
  histories: readonly SubscriptionHistory[];
  catalogue: Catalogue;
  periods: readonly Period[];
  resolution: Resolution;
  /** Epoch ms: the end of what is known. */
  now: number;
}

/** Period i is still to come. */
const futureOf = (input: ChartInput) => (i: number) => input.periods[i].start > input.now;
const sortedEntries = <V>(m: Map<string, V>) => [...m.entries()].sort(([a], [b]) => a.localeCompare(b));

/** The instant each period is read at: its last moment, or now for the period in progress; null for one to come. */
function readTimes(periods: readonly Period[], now: number): (number | null)[] {
  return periods.map((p) => (p.start > now ? null : Math.min(p.end - 1, now)));
}

/**
 * Levels at each period's read time: for every segment, `value(seg)` (keyed) is added to the
 * periods whose read time falls inside it. A difference array keeps it linear in segments.
 */
function levels(input: ChartInput, value: (s: Segment) => { key: string; v: number } | null): Map<string, number[]> {
  const times = readTimes(input.periods, input.now);
  const known = times.filter((t): t is number => t !== null);
  const firstAtOrAfter = (x: number) => {
    let lo = 0;
    let hi = known.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (known[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const diffs = new Map<string, number[]>();
  for (const h of input.histories) {
    for (const s of segments(h, input.catalogue)) {
      const kv = value(s);
      if (!kv || kv.v === 0) continue;
      const i0 = firstAtOrAfter(s.from);
      const i1 = s.to === null ? known.length : firstAtOrAfter(s.to);
      if (i0 >= i1) continue;
      let d = diffs.get(kv.key);
      if (!d) diffs.set(kv.key, (d = new Array(known.length + 1).fill(0)));
      d[i0] += kv.v;
      d[i1] -= kv.v;
    }
  }
  const out = new Map<string, number[]>();
  for (const [key, d] of diffs) {
    const vals: number[] = [];
    let run = 0;
    for (let i = 0; i < known.length; i++) vals.push((run += d[i]));
    out.set(key, vals);
  }
  return out;
}

/** Pad the known periods' values with nulls for the periods to come. */
function withFuture(input: ChartInput, vals: readonly number[]): (number | null)[] {
  return input.periods.map((p, i) => (p.start > input.now ? null : (vals[i] ?? 0)));
}

/** Sums into periods: `add(key, at, v)` adds v to the period holding `at`. */
function bucketer(input: ChartInput) {
  const sums = new Map<string, number[]>();
  return {
    add(key: string, at: number, v: number) {
      const i = periodIndex(input.periods, at);
      if (i < 0) return;
      let a = sums.get(key);
      if (!a) sums.set(key, (a = new Array(input.periods.length).fill(0)));
      a[i] += v;
    },
    get: (key: string) => sums.get(key),
    keys: () => [...sums.keys()].sort(),
  };
}

function mrrChart(input: ChartInput, factor: number, name: string): ChartData {
  const byCurrency = levels(input, (s) => (s.mrr12 > 0 && s.price ? { key: s.price.currency, v: s.mrr12 } : null));
  return {
    periods: input.periods.map((p) => p.label),
    series: sortedEntries(byCurrency).map(([currency, vals]) => ({
      key: currency,
      label: `${name} (${currency})`,
      unit: 'money' as const,
      currency,
      values: withFuture(
        input,
        vals.map((v) => Math.round((v * factor) / 12)),
      ),
    })),
  };
}

function movementChart(input: ChartInput): ChartData {
  const b = bucketer(input);
  const currencies = new Set<string>();
  for (const h of input.histories) {
    for (const m of movements(segments(h, input.catalogue))) {
      currencies.add(m.currency);
      b.add(`${m.kind}\n${m.currency}`, m.at, m.delta12);
      b.add(`net\n${m.currency}`, m.at, m.delta12);
    }
  }
  const series: ChartSeries[] = [];
  for (const currency of [...currencies].sort()) {
    for (const kind of [...MOVEMENT_KINDS, 'net'] as const) {
      const vals = b.get(`${kind}\n${currency}`) ?? [];
      series.push({
        key: `${kind}:${currency}`,
        label: `${kind} (${currency})`,
        unit: 'money',
        currency,
        values: withFuture(
          input,
          input.periods.map((_, i) => Math.round((vals[i] ?? 0) / 12)),
        ),
      });
    }
  }
  return { periods: input.periods.map((p) => p.label), series };
}

function countChart(input: ChartInput, label: string, counts: (s: Segment) => boolean): ChartData {
  const vals = levels(input, (s) => (counts(s) ? { key: 'n', v: 1 } : null)).get('n') ?? [];
  return {
    periods: input.periods.map((p) => p.label),
    series: [{ key: 'count', label, unit: 'count', currency: null, values: withFuture(input, vals) }],
  };
}

function trialConversion(input: ChartInput): ChartData {
  const b = bucketer(input);
  for (const h of input.histories) {
    const t = trial(h);
    if (!t) continue;
    b.add('trials', t.started, 1);
    if (t.converted !== null && t.converted <= input.now) b.add('converted', t.started, 1);
  }
  return {
    periods: input.periods.map((p) => p.label),
    series: trialConversionSeries(input.periods.length, futureOf(input), b.get('trials'), b.get('converted')),
  };
}

/** Levels at each period's start (the read time of the period before it). */
function atStarts(input: ChartInput, value: (s: Segment) => { key: string; v: number } | null) {
  const before: Period[] = input.periods.map((p) => ({ label: p.label, start: p.start - 1, end: p.start }));
  return levels({ ...input, periods: before }, value);
}

function churnRate(input: ChartInput): ChartData {
  const b = bucketer(input);
  const currencies = new Set<string>();
  for (const h of input.histories) {
    for (const m of movements(segments(h, input.catalogue))) {
      if (m.kind === 'churned') b.add('churned', m.at, 1);
      if (m.kind === 'churned' || m.kind === 'contraction') {
        currencies.add(m.currency);
        b.add(`lost\n${m.currency}`, m.at, -m.delta12);
      }
    }
  }
  const payingAtStart = atStarts(input, (s) => (isPaying(s.status) && s.mrr12 > 0 ? { key: 'n', v: 1 } : null)).get(
    'n',
  );
  const mrrAtStart = atStarts(input, (s) => (s.mrr12 > 0 && s.price ? { key: s.price.currency, v: s.mrr12 } : null));
  for (const c of mrrAtStart.keys()) currencies.add(c);
  const n = input.periods.length;
  const series: ChartSeries[] = [subscriptionChurnSeries(n, futureOf(input), b.get('churned'), payingAtStart)];
  for (const currency of [...currencies].sort())
    series.push(revenueChurnSeries(n, futureOf(input), currency, b.get(`lost\n${currency}`), mrrAtStart.get(currency)));
  return { periods: input.periods.map((p) => p.label), series };
}

function refundRate(input: ChartInput): ChartData {
  const b = bucketer(input);
  for (const h of input.histories) {
    for (const at of refunds(h)) b.add('refunds', at, 1);
    for (const m of revenue(segments(h, input.catalogue), input.now)) if (m.amount_minor > 0) b.add('charges', m.at, 1);
  }
  return {
    periods: input.periods.map((p) => p.label),
    series: refundRateSeries(input.periods.length, futureOf(input), b.get('refunds'), b.get('charges')),
  };
}

function ltv(input: ChartInput): ChartData {
  // A customer's cohort is the period of their first payment on any of their subscriptions.
  const customers = new Map<string, { first: number; money: Money[] }>();
  for (const h of input.histories) {
    const first = firstPaid(h);
    if (first === null || first > input.now) continue;
    const c = customers.get(h.customer) ?? { first, money: [] };
    c.first = Math.min(c.first, first);
    c.money.push(...revenue(segments(h, input.catalogue), input.now));
    customers.set(h.customer, c);
  }
  const b = bucketer(input);
  const currencies = new Set<string>();
  for (const c of customers.values()) {
    b.add('customers', c.first, 1);
    for (const m of c.money) {
      currencies.add(m.currency);
      b.add(`revenue\n${m.currency}`, c.first, m.amount_minor);
    }
  }
  const size = input.periods.map((_, i) => b.get('customers')?.[i] ?? 0);
  const n = input.periods.length;
  const series: ChartSeries[] = [cohortCustomersSeries(n, futureOf(input), size)];
  for (const currency of [...currencies].sort())
    series.push(revenuePerCustomerSeries(n, futureOf(input), currency, size, b.get(`revenue\n${currency}`)));
  return { periods: input.periods.map((p) => p.label), series };
}

/**
 * Retention by monthly cohort, whatever the resolution asked: a subscription's cohort is the
 * month it first paid; it is retained in month k after when it paid at any moment of that month.
 */
function retention(input: ChartInput): ChartData {
  const months = input.periods.length === 0 ? [] : monthsOf(input);
  const rows = months.map((m) => ({ cohort: m.label, size: 0, retained: new Array<number>(months.length).fill(0) }));
  for (const h of input.histories) {
    const first = firstPaid(h);
    if (first === null) continue;
    const c = periodIndex(months, first);
    if (c < 0) continue;
    rows[c].size += 1;
    const paid = segments(h, input.catalogue).filter((s) => isPaying(s.status));
    for (let k = c; k < months.length && months[k].start <= input.now; k++) {
      const m = months[k];
      if (paid.some((s) => s.from < m.end && (s.to === null || s.to > m.start))) rows[c].retained[k - c] += 1;
    }
  }
  const cohorts: CohortRow[] = rows.map((r, c) => ({
    cohort: r.cohort,
    size: r.size,
    values: months.slice(c).map((m, k) => (m.start > input.now ? null : ratio(r.retained[k], r.size))),
  }));
  return {
    periods: months.map((m) => m.label),
    series: [
      {
        key: 'size',
        label: 'Cohort size',
        unit: 'count',
        currency: null,
        values: rows.map((r, i) => (months[i].start > input.now ? null : r.size)),
      },
    ],
    cohorts,
  };
}

function monthsOf(input: ChartInput): Period[] {
  const out: Period[] = [];
  const last = input.periods[input.periods.length - 1].end;
  for (let s = periodStart(input.periods[0].start, 'month'); s < last; s = addMonths(s, 1)) {
    out.push({ label: new Date(s).toISOString().slice(0, 10), start: s, end: addMonths(s, 1) });
  }
  return out;
}

type Dimension = 'provider' | 'product' | 'country';

function revenueBy(input: ChartInput, dim: Dimension): ChartData {
  const b = bucketer(input);
  const labels = new Map<string, { label: string; currency: string }>();
  for (const h of input.histories) {
    for (const m of revenue(segments(h, input.catalogue), input.now)) {
      const value =
        dim === 'provider'
          ? h.provider
          : dim === 'country'
            ? (h.country ?? 'unknown')
            : ((m.product_id && input.catalogue.get(m.product_id)?.sku) ?? 'unknown');
      const key = `${value}:${m.currency}`;
      labels.set(key, { label: `${value} (${m.currency})`, currency: m.currency });
      b.add(key, m.at, m.amount_minor);
    }
  }
  return {
    periods: input.periods.map((p) => p.label),
    series: b.keys().map((key) => ({
      key,
      label: labels.get(key)!.label,
      unit: 'money' as const,
      currency: labels.get(key)!.currency,
      values: withFuture(
        input,
        input.periods.map((_, i) => b.get(key)?.[i] ?? 0),
      ),
    })),
  };
}

export function computeChart(name: ChartName, input: ChartInput): ChartData {
  switch (name) {
    case 'mrr':
      return mrrChart(input, 1, 'MRR');
    case 'arr':
      return mrrChart(input, 12, 'ARR');
    case 'mrr_movement':
      return movementChart(input);
    case 'active_subscriptions':
      return countChart(input, 'Active subscriptions', (s) => isPaying(s.status));
    case 'active_trials':
      return countChart(input, 'Active trials', (s) => s.status === 'trialing');
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
      return revenueBy(input, 'provider');
    case 'revenue_by_product':
      return revenueBy(input, 'product');
    case 'revenue_by_country':
      return revenueBy(input, 'country');
  }
}
