import type { Mode } from '../domain/providers';
import type { DayCompaction, DaySum, LtvSum, RetentionSum } from '../domain/charts/from-sums';
import { ANY, DAY_MEASURES, type DayMeasure, type Measures } from '../domain/charts/facts';
import type { Catalogue } from '../domain/charts/history';
import type { Split } from '../domain/charts/sum-facts';
import type { TenantReader } from './tenant-read';

/**
 * A day-sum pattern with this bit holds its rows summed over the product charged (`charged` is
 * '*'); without it, one row per product charged. The fold derives both (db/chart-fold.ts).
 */
export const CHARGED_SUMMED = 8;

/** Which sums a chart reads (the rest it does not need). */
export type SumsNeeded = 'days' | 'retention' | 'ltv';

export interface SumsFilter {
  mode: Mode;
  provider?: string;
  /** A product id (the caller resolved a SKU). */
  product?: string;
  country?: string;
}

export interface SumsState {
  /** Whether the fold job has built this tenant's sums. */
  built: boolean;
  /** Epoch ms: what the sums know is exact up to then (now when nothing is waiting for the next fold). */
  asOf: number;
}

/**
 * Where the tenant's chart sums stand: built or not, and as of when. Nothing pending and
 * nothing due means the sums are exact now; else they are as of the last fold.
 */
export async function readSumsState(reader: TenantReader): Promise<SumsState> {
  const [r] = await reader.rows(
    `select (select floor(extract(epoch from folded_at) * 1000)::float8 from chart_fold_state) as folded_at,
            floor(extract(epoch from now()) * 1000)::float8 as now,
            exists (select 1 from chart_pending) or exists (select 1 from chart_subscription_facts where due <= now()) as waiting`,
    [],
  );
  if (r.folded_at === null) return { built: false, asOf: Number(r.now) };
  return { built: true, asOf: r.waiting ? Number(r.folded_at) : Number(r.now) };
}

/** The one product id a product filter (an id or a SKU) names, or null for none. */
export async function resolveProduct(reader: TenantReader, product: string): Promise<string | null> {
  const rows = await reader.rows('select id::text as id from products where id::text = $1 or sku = $1 limit 1', [
    product,
  ]);
  return rows.length ? String(rows[0].id) : null;
}

const GROUP: Record<Exclude<Split, null>, string> = {
  provider: 'provider_key',
  country: `case when country = '' then 'unknown' else country end`,
  product: 'charged',
};

/**
 * The summed rows a chart reads, for one filter: day sums (all days: levels add up every change
 * before the window too) grouped by day, currency and the chart's split; retention and LTV sums
 * only for their charts. Read only, in the tenant's read transaction (RLS).
 *
 * With `compaction` (domain/charts/from-sums.ts `dayCompaction`: the chart's periods) the days a
 * chart cannot tell apart are added up here: a period's days up to its read day into its first
 * day, the days before the window into one. What reaches the process is then periods ×
 * currencies × groups rows, not days × …: the transfer and parsing of thousands of day rows was
 * what a split chart spent its time on. Rows whose measures are all zero are left out (a chart
 * adds only what is not zero).
 */
export async function readChartSums(
  reader: TenantReader,
  filter: SumsFilter,
  needed: SumsNeeded,
  split: Split,
  catalogue: Catalogue,
  measures: readonly DayMeasure[] = DAY_MEASURES,
  compaction?: DayCompaction,
): Promise<{ days: DaySum[]; retention: RetentionSum[]; ltv: LtvSum[] }> {
  if (needed === 'ltv') {
    const rows = await reader.rows(
      `select day::text as day, currency, sum(customers)::float8 as customers, sum(revenue)::float8 as revenue,
              sum(items)::float8 as items
         from chart_ltv_sums where mode = $1 and provider_key = $2 and product = $3 and country = $4
        group by day, currency`,
      [filter.mode, filter.provider ?? ANY, filter.product ?? ANY, filter.country ?? ANY],
    );
    return { days: [], retention: [], ltv: rows.map((r) => ({ ...(r as LtvSum) })) };
  }
  // The rows of the filter's way to filter: its dimensions and the chart's split kept, the others '*'.
  const kept = { provider: filter.provider, product: filter.product, country: filter.country };
  const pattern =
    (kept.provider !== undefined || split === 'provider' ? 1 : 0) |
    (kept.product !== undefined ? 2 : 0) |
    (kept.country !== undefined || split === 'country' ? 4 : 0);
  const values: unknown[] = [filter.mode, pattern];
  const where = ['mode = $1', 'pattern = $2'];
  for (const [dim, bit] of [
    ['provider', 1],
    ['product', 2],
    ['country', 4],
  ] as const) {
    const v = kept[dim];
    const col = dim === 'provider' ? 'provider_key' : dim;
    if (v !== undefined) where.push(`${col} = $${values.push(v)}`);
    else if (!(pattern & bit)) where.push(`${col} = '${ANY}'`);
  }
  if (needed === 'retention') {
    const rows = await reader.rows(
      `select cohort::text as cohort, month::text as month, sum(size)::float8 as size, sum(retained)::float8 as retained
         from chart_retention_sums where ${where.join(' and ')} group by cohort, month`,
      values,
    );
    return { days: [], retention: rows.map((r) => ({ ...(r as RetentionSum) })), ltv: [] };
  }
  // Only the product split tells the products charged apart: every other chart reads the day rows
  // summed over them (a fraction of the rows).
  if (split !== 'product') values[1] = pattern | CHARGED_SUMMED;
  const group = split ? GROUP[split] : `''`;
  if (measures.length > 0) where.push(`(${measures.map((m) => `${m} <> 0`).join(' or ')})`);
  if (compaction) {
    // compactDay's rule: bucket b (width_bucket: 0 before the first start), its start up to its read day.
    const [before, starts, reads] = [compaction.before, compaction.starts, compaction.reads].map(
      (v) => `$${values.push(v)}`,
    );
    const day = `case when b.i = 0 then ${before}::date
                when day <= (${reads}::date[])[b.i] then (${starts}::date[])[b.i]
                else day end`;
    const rows = await reader.rows(
      `select (${day})::text as day, currency, ${group} as grp, ${measures.map((m) => `sum(${m})::float8 as ${m}`).join(', ')}
         from chart_day_sums cross join lateral (select width_bucket(day, ${starts}::date[]) as i) b
        where ${where.join(' and ')} group by 1, currency, grp`,
      values,
    );
    return { days: daySums(rows, split, catalogue, measures), retention: [], ltv: [] };
  }
  const rows = await reader.rows(
    `select day::text as day, currency, ${group} as grp, ${measures.map((m) => `sum(${m})::float8 as ${m}`).join(', ')}
       from chart_day_sums where ${where.join(' and ')} group by day, currency, grp`,
    values,
  );
  return { days: daySums(rows, split, catalogue, measures), retention: [], ltv: [] };
}

/** The rows as a chart takes them: a split's group named, zeros left out. */
function daySums(
  rows: Record<string, unknown>[],
  split: Split,
  catalogue: Catalogue,
  measures: readonly DayMeasure[],
): DaySum[] {
  const days = new Map<string, DaySum>();
  for (const r of rows) {
    // A product charged is named by its SKU (several ids never share one; an id no longer in the catalogue is unknown).
    const g = split === 'product' ? (catalogue.get(String(r.grp))?.sku ?? 'unknown') : String(r.grp);
    const key = `${r.day}\n${r.currency}\n${g}`;
    const d = days.get(key) ?? { day: String(r.day), currency: String(r.currency), group: g, m: {} as Measures };
    for (const m of measures) if (Number(r[m]) !== 0) d.m[m] = (d.m[m] ?? 0) + Number(r[m]);
    days.set(key, d);
  }
  return [...days.values()];
}
