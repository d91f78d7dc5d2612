import type { Catalogue } from './history';
import { ANY, type LtvFact, type SubscriptionFacts } from './facts';
import type { DaySum, LtvSum, RetentionSum } from './from-sums';

/** What a chart splits revenue by (the rest sum into one group). */
export type Split = 'provider' | 'product' | 'country' | null;

/** A subscription's facts with what a chart filters it by ('' for a product or country not known). */
export interface FiledFacts {
  mode: string;
  provider: string;
  product: string;
  country: string;
  facts: SubscriptionFacts;
}

/** A chart's filter on facts: a product is its id here (the caller resolved a SKU). */
export interface FactFilter {
  mode: string;
  provider?: string;
  product?: string;
  country?: string;
}

const keeps = (f: FactFilter, s: { mode: string; provider: string; product: string; country: string }) =>
  s.mode === f.mode &&
  (f.provider === undefined || s.provider === f.provider) &&
  (f.product === undefined || s.product === f.product) &&
  (f.country === undefined || s.country === f.country);

/**
 * The sums a chart reads, added up in the process: what the fold job's tables hold and
 * db/chart-sums.ts reads with SQL, for a tenant whose sums are not built yet (and for the tests).
 */
export function sumFacts(
  subs: readonly FiledFacts[],
  customers: readonly LtvFact[],
  filter: FactFilter,
  split: Split,
  catalogue: Catalogue,
): { days: DaySum[]; retention: RetentionSum[]; ltv: LtvSum[] } {
  const days = new Map<string, DaySum>();
  const retention = new Map<string, RetentionSum>();
  for (const s of subs) {
    if (!keeps(filter, s)) continue;
    for (const f of s.facts.days) {
      const group =
        split === 'provider'
          ? s.provider
          : split === 'country'
            ? s.country || 'unknown'
            : split === 'product'
              ? (catalogue.get(f.product)?.sku ?? 'unknown')
              : '';
      const key = `${f.day}\n${f.currency}\n${group}`;
      const r = days.get(key) ?? { day: f.day, currency: f.currency, group, m: {} };
      for (const [m, v] of Object.entries(f.m)) r.m[m as keyof typeof f.m] = (r.m[m as keyof typeof f.m] ?? 0) + v;
      days.set(key, r);
    }
    for (const f of s.facts.retention) {
      const key = `${f.cohort}\n${f.month}`;
      const r = retention.get(key) ?? { cohort: f.cohort, month: f.month, size: 0, retained: 0 };
      r.size += f.size;
      r.retained += f.retained;
      retention.set(key, r);
    }
  }
  const ltv = new Map<string, LtvSum>();
  for (const f of customers) {
    if (
      f.mode !== filter.mode ||
      f.provider !== (filter.provider ?? ANY) ||
      f.product !== (filter.product ?? ANY) ||
      f.country !== (filter.country ?? ANY)
    )
      continue;
    const key = `${f.day}\n${f.currency}`;
    const r = ltv.get(key) ?? { day: f.day, currency: f.currency, customers: 0, revenue: 0, items: 0 };
    r.customers += f.customers;
    r.revenue += f.revenue;
    r.items += f.items;
    ltv.set(key, r);
  }
  return { days: [...days.values()], retention: [...retention.values()], ltv: [...ltv.values()] };
}
