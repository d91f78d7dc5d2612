import { mrrByCurrency } from '../../domain/mrr';
import { PROVIDERS } from '../../domain/providers';
import type { OverviewFigures } from '../../db/overview';

/** The daily series the overview charts, by provider. */
export const SERIES = [
  { key: 'active', title: 'Active subscriptions' },
  { key: 'new_trials', title: 'New trials' },
  { key: 'conversions', title: 'Trial → paid conversions' },
  { key: 'cancellations', title: 'Cancellations' },
  { key: 'refunds', title: 'Refunds' },
] as const;
export type SeriesKey = (typeof SERIES)[number]['key'];

export interface ProviderNow {
  provider: string;
  active: number;
  trialing: number;
  past_due: number;
  entitlements_active: number;
  grace_period: number;
  refunds_30d: number;
  cancellations_30d: number;
  webhook_failures_24h: number;
}

export interface OverviewModel {
  days: string[];
  providers: string[];
  now: ProviderNow[];
  total: Omit<ProviderNow, 'provider'>;
  mrr: { currency: string; mrr_minor: number; subscriptions: number }[];
  unpriced: number;
  series: Record<SeriesKey, { label: string; values: number[] }[]>;
}

/** The window's UTC days, oldest first, ending on `today` (YYYY-MM-DD). */
export function windowDays(today: string, days: number): string[] {
  const end = Date.parse(`${today}T00:00:00Z`);
  return Array.from({ length: days }, (_, i) => new Date(end - (days - 1 - i) * 86_400_000).toISOString().slice(0, 10));
}

const count = (rows: { provider: string; key: string; n: number }[], provider: string, key: string) =>
  rows.find((r) => r.provider === provider && r.key === key)?.n ?? 0;

/**
 * Figures into what the page shows. Active subscriptions on a past day: today's count minus
 * the net change of every later day in the window (the changes table records every move).
 */
export function overviewModel(f: OverviewFigures, today: string, days: number): OverviewModel {
  const dayList = windowDays(today, days);
  const seen = new Set([...f.subscriptions, ...f.entitlements].map((r) => r.provider));
  for (const r of [...f.days, ...f.last30, ...f.webhookFailures24h]) seen.add(r.provider);
  const providers = PROVIDERS.filter((p) => seen.has(p));

  const now: ProviderNow[] = providers.map((provider) => ({
    provider,
    active: count(f.subscriptions, provider, 'active'),
    trialing: count(f.subscriptions, provider, 'trialing'),
    past_due: count(f.subscriptions, provider, 'past_due'),
    entitlements_active: count(f.entitlements, provider, 'active'),
    grace_period: count(f.entitlements, provider, 'grace_period'),
    refunds_30d: f.last30.find((r) => r.provider === provider)?.refunds ?? 0,
    cancellations_30d: f.last30.find((r) => r.provider === provider)?.cancellations ?? 0,
    webhook_failures_24h: f.webhookFailures24h.find((r) => r.provider === provider)?.n ?? 0,
  }));
  const total = {
    active: 0,
    trialing: 0,
    past_due: 0,
    entitlements_active: 0,
    grace_period: 0,
    refunds_30d: 0,
    cancellations_30d: 0,
    webhook_failures_24h: 0,
  };
  for (const p of now) for (const k of Object.keys(total) as (keyof typeof total)[]) total[k] += p[k];

  const series = Object.fromEntries(
    SERIES.map((s) => [s.key, [] as { label: string; values: number[] }[]]),
  ) as OverviewModel['series'];
  for (const p of now) {
    const byDay = new Map(f.days.filter((d) => d.provider === p.provider).map((d) => [d.day, d]));
    const at = (i: number) => byDay.get(dayList[i]);
    const active: number[] = new Array(days).fill(0);
    let level = p.active;
    for (let i = days - 1; i >= 0; i--) {
      active[i] = level;
      level -= at(i)?.active_delta ?? 0;
    }
    series.active.push({ label: p.provider, values: active });
    for (const key of ['new_trials', 'conversions', 'cancellations', 'refunds'] as const) {
      series[key].push({ label: p.provider, values: dayList.map((_, i) => at(i)?.[key] ?? 0) });
    }
  }
  return { days: dayList, providers, now, total, mrr: mrrByCurrency(f.priced), unpriced: f.unpriced, series };
}
