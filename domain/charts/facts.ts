import {
  firstPaid,
  isPaying,
  movements,
  nextCharge,
  refunds,
  revenue,
  segments,
  trial,
  type Catalogue,
  type Segment,
  type SubscriptionHistory,
} from './history';
import { addMonths, dayOf, periodStart } from './periods';

/**
 * What one subscription adds to each chart, by UTC day: the charts are sums of these over the
 * subscriptions a filter keeps, so the worker's fold job keeps the sums (docs/charts.md, "Where
 * the time goes") and a chart reads a bounded number of summed rows. Every figure is derived
 * here from the functions of history.ts that the full computation uses (the tests' reference,
 * test/helpers/chart-reference.ts), so the two give the same numbers
 * (test/domain/chart-sums.test.ts proves it).
 *
 * Levels (MRR, paying, trialing) are kept as changes: +v on the day a stretch starts, −v on the
 * day it ends, so the level at the end of a day is the sum of every change up to it. Money is
 * integer: revenue in minor units, MRR and its movements in twelfths of a minor unit.
 */
export const DAY_MEASURES = [
  // level changes
  'paying',
  'priced',
  'trialing',
  'mrr12',
  // MRR movements in the day, per currency
  'new12',
  'expansion12',
  'contraction12',
  'churned12',
  'reactivated12',
  // counts in the day
  'churned',
  'trials',
  'converted',
  'refunds',
  'charges',
  // realized revenue in the day (per currency and product charged), and how many charges and refunds made it
  'revenue',
  'items',
] as const;
export type DayMeasure = (typeof DAY_MEASURES)[number];
export type Measures = Partial<Record<DayMeasure, number>>;

/** One day's figures, per currency ('' for counts) and product charged ('' unless revenue of a known product). */
export interface DayFact {
  day: string;
  currency: string;
  product: string;
  m: Measures;
}

/**
 * Retention: +1 in `size` of the cohort's own month; `retained` changes by ±1 when a run of paid
 * months starts or ends.
 */
export interface RetentionFact {
  cohort: string;
  month: string;
  size: number;
  retained: number;
}

export interface SubscriptionFacts {
  days: DayFact[];
  retention: RetentionFact[];
  /** When these facts next change with time alone (the open paid stretch's next charge); null: never. */
  due: number | null;
}

class DaySums {
  private rows = new Map<string, DayFact>();
  add(at: number, currency: string, product: string, measure: DayMeasure, v: number) {
    if (v === 0) return;
    const day = dayOf(at);
    const key = `${day}\n${currency}\n${product}`;
    let r = this.rows.get(key);
    if (!r) this.rows.set(key, (r = { day, currency, product, m: {} }));
    r.m[measure] = (r.m[measure] ?? 0) + v;
  }
  list(): DayFact[] {
    return [...this.rows.values()].sort((a, b) =>
      (a.day + a.currency + a.product).localeCompare(b.day + b.currency + b.product),
    );
  }
}

const monthOf = (t: number) => periodStart(t, 'month');

/** The facts of one subscription known at `now`. */
export function subscriptionFacts(h: SubscriptionHistory, catalogue: Catalogue, now: number): SubscriptionFacts {
  const segs = segments(h, catalogue);
  const d = new DaySums();
  const level = (from: number, to: number | null, currency: string, measure: DayMeasure, v: number) => {
    d.add(from, currency, '', measure, v);
    if (to !== null) d.add(to, currency, '', measure, -v);
  };
  for (const s of segs) {
    if (isPaying(s.status)) level(s.from, s.to, '', 'paying', 1);
    if (isPaying(s.status) && s.mrr12 > 0) level(s.from, s.to, '', 'priced', 1);
    if (s.status === 'trialing') level(s.from, s.to, '', 'trialing', 1);
    if (s.mrr12 > 0 && s.price) level(s.from, s.to, s.price.currency, 'mrr12', s.mrr12);
  }
  for (const m of movements(segs)) {
    d.add(m.at, m.currency, '', `${m.kind}12`, m.delta12);
    if (m.kind === 'churned') d.add(m.at, '', '', 'churned', 1);
  }
  const t = trial(h);
  if (t) {
    d.add(t.started, '', '', 'trials', 1);
    if (t.converted !== null && t.converted <= now) d.add(t.started, '', '', 'converted', 1);
  }
  for (const at of refunds(h)) d.add(at, '', '', 'refunds', 1);
  for (const m of revenue(segs, now)) {
    if (m.amount_minor > 0) d.add(m.at, '', '', 'charges', 1);
    const product = m.product_id && catalogue.has(m.product_id) ? m.product_id : '';
    d.add(m.at, m.currency, product, 'revenue', m.amount_minor);
    d.add(m.at, m.currency, product, 'items', 1);
  }
  return { days: d.list(), retention: retentionFacts(h, segs), due: nextCharge(segs, now) };
}

/**
 * Retention by monthly cohort: the subscription's cohort is the month it first paid; it is
 * retained in a month when it paid at any moment of it. Kept as the runs of retained months
 * (+1 where a run starts, −1 after it ends; an open paid stretch's run never ends).
 */
function retentionFacts(h: SubscriptionHistory, segs: readonly Segment[]): RetentionFact[] {
  const first = firstPaid(h);
  if (first === null) return [];
  const cohort = monthOf(first);
  const paid = segs.filter((s) => isPaying(s.status));
  const open = paid.some((s) => s.to === null);
  const limit = Math.max(...paid.map((s) => s.to ?? s.from));
  const out: RetentionFact[] = [{ cohort: dayOf(cohort), month: dayOf(cohort), size: 1, retained: 0 }];
  let was = false;
  let m = cohort;
  for (; m <= limit; m = addMonths(m, 1)) {
    const end = addMonths(m, 1);
    const is = paid.some((s) => s.from < end && (s.to === null || s.to > m));
    if (is !== was) out.push({ cohort: dayOf(cohort), month: dayOf(m), size: 0, retained: is ? 1 : -1 });
    was = is;
  }
  if (was && !open) out.push({ cohort: dayOf(cohort), month: dayOf(m), size: 0, retained: -1 });
  return out;
}

/** One subscription of a customer, with what a chart filters it by ('' for a product or country not known). */
export interface CustomerSubscription {
  mode: string;
  provider: string;
  product: string;
  country: string;
  history: SubscriptionHistory;
}

/** Matches every value of a dimension in an LTV fact: the fact holds for the filters that leave it out. */
export const ANY = '*';

/** A customer cohort's figures for one filter: customers, and their revenue per currency. */
export interface LtvFact {
  mode: string;
  provider: string;
  product: string;
  country: string;
  day: string;
  currency: string;
  customers: number;
  revenue: number;
  items: number;
}

/**
 * Realized LTV counts customers, not subscriptions: a customer's cohort is their first payment
 * on any of the subscriptions a filter keeps, so it depends on the filter. One customer's
 * facts are therefore written for each of the eight ways to filter (provider, product and
 * country each kept or left out, `ANY`), per mode: a chart reads the one row set its filter names.
 */
export function customerFacts(subs: readonly CustomerSubscription[], catalogue: Catalogue, now: number): LtvFact[] {
  // Each subscription's first payment and revenue once; the groups add them up.
  const own = subs.map((s) => {
    const first = firstPaid(s.history);
    if (first === null || first > now) return null;
    const money = new Map<string, { revenue: number; items: number }>();
    for (const m of revenue(segments(s.history, catalogue), now)) {
      const c = money.get(m.currency) ?? { revenue: 0, items: 0 };
      c.revenue += m.amount_minor;
      c.items += 1;
      money.set(m.currency, c);
    }
    return { first, money };
  });
  type Key = Pick<LtvFact, 'mode' | 'provider' | 'product' | 'country'>;
  const groups = new Map<string, { key: Key; first: number; money: Map<string, { revenue: number; items: number }> }>();
  subs.forEach((s, i) => {
    const o = own[i];
    if (!o) return;
    for (let mask = 0; mask < 8; mask++) {
      const key = {
        mode: s.mode,
        provider: mask & 1 ? s.provider : ANY,
        product: mask & 2 ? s.product : ANY,
        country: mask & 4 ? s.country : ANY,
      };
      const k = `${key.mode}\n${key.provider}\n${key.product}\n${key.country}`;
      let g = groups.get(k);
      if (!g) groups.set(k, (g = { key, first: o.first, money: new Map() }));
      g.first = Math.min(g.first, o.first);
      for (const [currency, c] of o.money) {
        const t = g.money.get(currency) ?? { revenue: 0, items: 0 };
        t.revenue += c.revenue;
        t.items += c.items;
        g.money.set(currency, t);
      }
    }
  });
  const out: LtvFact[] = [];
  for (const { key, first, money } of groups.values()) {
    const day = dayOf(first);
    out.push({ ...key, day, currency: '', customers: 1, revenue: 0, items: 0 });
    for (const [currency, c] of money) out.push({ ...key, day, currency, customers: 0, ...c });
  }
  return out;
}
