/**
 * The periods a chart is drawn over: UTC days, ISO weeks (Monday first) or calendar months.
 * Every bound is epoch milliseconds; a period is [start, end).
 */
export const RESOLUTIONS = ['day', 'week', 'month'] as const;
export type Resolution = (typeof RESOLUTIONS)[number];

export interface Period {
  /** The period's first day, YYYY-MM-DD (UTC). */
  label: string;
  start: number;
  end: number;
}

const DAY_MS = 86_400_000;

/** The most periods one chart draws at each resolution (two years of days, five of weeks, ten of months). */
export const MAX_PERIODS: Record<Resolution, number> = { day: 731, week: 261, month: 120 };

export const dayOf = (t: number) => new Date(t).toISOString().slice(0, 10);

/** Calendar arithmetic in UTC: `months` months after `t`, the day clamped to the target month's length. */
export function addMonths(t: number, months: number): number {
  const d = new Date(t);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth() + months;
  const last = new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
  return Date.UTC(
    y,
    m,
    Math.min(d.getUTCDate(), last),
    d.getUTCHours(),
    d.getUTCMinutes(),
    d.getUTCSeconds(),
    d.getUTCMilliseconds(),
  );
}

/** The start of the period that holds `t`. */
export function periodStart(t: number, resolution: Resolution): number {
  const d = new Date(t);
  const day = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  if (resolution === 'day') return day;
  if (resolution === 'week') return day - ((d.getUTCDay() + 6) % 7) * DAY_MS;
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

export function nextPeriod(start: number, resolution: Resolution): number {
  if (resolution === 'day') return start + DAY_MS;
  if (resolution === 'week') return start + 7 * DAY_MS;
  return addMonths(start, 1);
}

/**
 * The periods that hold the days `from` to `to` (both YYYY-MM-DD, inclusive), oldest first; at
 * most `cap` of them (a caller refusing a longer range asks for one more than it allows).
 */
export function periodsBetween(from: string, to: string, resolution: Resolution, cap = Infinity): Period[] {
  const last = Date.parse(`${to}T00:00:00Z`);
  const out: Period[] = [];
  for (
    let s = periodStart(Date.parse(`${from}T00:00:00Z`), resolution);
    s <= last && out.length < cap;
    s = nextPeriod(s, resolution)
  ) {
    out.push({ label: dayOf(s), start: s, end: nextPeriod(s, resolution) });
  }
  return out;
}

/** Index of the period holding `t`, or -1 outside them all (periods are contiguous and sorted). */
export function periodIndex(periods: readonly Period[], t: number): number {
  if (periods.length === 0 || t < periods[0].start || t >= periods[periods.length - 1].end) return -1;
  let lo = 0;
  let hi = periods.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (periods[mid].start <= t) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
