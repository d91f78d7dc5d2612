import { minorDigits } from '../catalogue';
import { dayOf, type Period } from './periods';

/**
 * Exchange rates the tenant provides (docs/charts.md, "Currencies"): one `from` major unit is
 * `rate` major units of `to`, from the day `valid_from` until the next rate of the same pair.
 * One way only: a rate from EUR to USD converts EUR into USD, nothing else; no rate is derived.
 */
export interface Rate {
  from: string;
  to: string;
  rate: number;
  /** YYYY-MM-DD (UTC). */
  valid_from: string;
}
export type RateBook = readonly Rate[];

/** The rate of `from` into `to` in force on `day` (the latest one valid from that day or before), or null. */
export function rateOn(book: RateBook, from: string, to: string, day: string): number | null {
  let best: Rate | null = null;
  for (const r of book) {
    if (r.from !== from || r.to !== to || r.valid_from > day) continue;
    if (!best || r.valid_from > best.valid_from) best = r;
  }
  return best ? best.rate : null;
}

export interface CurrencyPlan {
  /** The currencies a chart's money is shown in, sorted. */
  currencies: string[];
  /** The currencies left unconverted (no rate for some period), sorted. */
  unconverted: string[];
  /** Where a currency's amounts go. */
  into(currency: string): string;
  /** What one minor unit of `currency` is worth in minor units of `into(currency)`, in period `i`. */
  factor(currency: string, i: number): number;
}

/**
 * How a chart's currencies are shown: each as it is; or, converting into `to`, each period's
 * amounts at the rate in force on the period's last day (today for the one in progress), minor
 * units scaled by the two currencies' decimals. A currency missing a rate for any period that
 * has begun is left as it is for the whole chart and named: never half converted, never mixed.
 */
export function currencyPlan(
  periods: readonly Period[],
  now: number,
  currencies: readonly string[],
  convert?: { to: string; rates: RateBook },
): CurrencyPlan {
  const sorted = (xs: Iterable<string>) => [...new Set(xs)].sort();
  if (!convert) return { currencies: sorted(currencies), unconverted: [], into: (c) => c, factor: () => 1 };
  const days = periods.map((p) => (p.start > now ? null : dayOf(Math.min(p.end - 1, now))));
  const factors = new Map<string, number[]>();
  const unconverted: string[] = [];
  for (const c of currencies) {
    if (c === convert.to) continue;
    const scale = 10 ** (minorDigits(convert.to) - minorDigits(c));
    const fs = days.map((d) => (d === null ? 0 : (rateOn(convert.rates, c, convert.to, d) ?? NaN) * scale));
    if (fs.some((f) => Number.isNaN(f))) unconverted.push(c);
    else factors.set(c, fs);
  }
  const into = (c: string) => (unconverted.includes(c) ? c : convert.to);
  return {
    currencies: sorted(currencies.map(into)),
    unconverted: sorted(unconverted),
    into,
    factor: (c, i) => (c === convert.to || unconverted.includes(c) ? 1 : factors.get(c)![i]),
  };
}
