import type { SubscriptionSnapshot } from '../../domain/provider-snapshot';
import type { ProviderContext, SubscriptionPage } from '../types';
import { ProviderRejectedError } from '../errors';
import { paddleRequest, type HttpOptions } from './http';
import { sellerSku } from './webhook';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string | null => (typeof v === 'string' && v ? v : null);

/** Paddle's statuses → the snapshot's word (a paused subscription grants nothing until resumed). */
const STATUS: Record<string, SubscriptionSnapshot['status']> = {
  active: 'active',
  trialing: 'trialing',
  past_due: 'past_due',
  canceled: 'canceled',
  paused: 'expired',
};

/**
 * One Paddle subscription as the lifecycle needs it: its price names the sku, custom_data the app user (never the
 * email).
 */
export function snapshotOf(s: Obj, mode: ProviderContext['mode']): SubscriptionSnapshot | null {
  const status = STATUS[String(s.status)];
  const id = str(s.id);
  if (!status || !id) return null;
  const custom = obj(s.custom_data);
  const first = obj(Array.isArray(s.items) ? s.items[0] : null);
  const trial = obj(first.trial_dates);
  const scheduled = obj(s.scheduled_change);
  return {
    provider: 'psp_b',
    subscription_id: id,
    customer_id: str(s.customer_id),
    app_user_id: str(custom.app_user_id),
    sku: sellerSku(first), // the price's, never the buyer's custom_data (./webhook.ts)
    mode,
    status,
    started_at: str(s.started_at) ?? str(s.created_at) ?? new Date(0).toISOString(),
    trial_start: str(trial.starts_at),
    trial_end: str(trial.ends_at),
    current_period_end: str(obj(s.current_billing_period).ends_at),
    cancel_at: scheduled.action === 'cancel' ? str(scheduled.effective_at) : null,
    ended_at: status === 'canceled' ? str(s.canceled_at) : null,
    status_since: status === 'canceled' ? str(s.canceled_at) : null,
  };
}

/** Paddle's `GET /subscriptions/{subscription_id}`; null when Paddle has none by that id. */
export async function getSubscriptionSnapshot(
  ctx: ProviderContext,
  id: string,
  opts: HttpOptions,
): Promise<SubscriptionSnapshot | null> {
  try {
    const res = await paddleRequest<Obj>(ctx, 'GET', `/subscriptions/${encodeURIComponent(id)}`, opts);
    return snapshotOf(obj(res.data), ctx.mode);
  } catch (err) {
    if (err instanceof ProviderRejectedError && err.status === 404) return null;
    throw err;
  }
}

/**
 * One page of Paddle's `GET /subscriptions` (oldest id first, `per_page` up to 200), the cursor
 * being the `after` of `meta.pagination.next`.
 */
export async function listSubscriptionPage(
  ctx: ProviderContext,
  cursor: string | null,
  limit: number,
  opts: HttpOptions,
): Promise<SubscriptionPage> {
  const query: Record<string, string> = { per_page: String(Math.min(limit, 200)), order_by: 'id[ASC]' };
  if (cursor) query.after = cursor;
  const page = await paddleRequest<Obj[]>(ctx, 'GET', '/subscriptions', { ...opts, query });
  const rows = Array.isArray(page.data) ? page.data : [];
  const next = page.meta?.pagination?.has_more ? (afterOf(page.meta.pagination.next) ?? str(rows.at(-1)?.id)) : null;
  return {
    snapshots: rows.map((s) => snapshotOf(s, ctx.mode)).filter((s): s is SubscriptionSnapshot => !!s),
    seen: rows.length,
    next: rows.length ? next : null,
  };
}

function afterOf(next: string | undefined): string | null {
  if (!next) return null;
  try {
    return new URL(next).searchParams.get('after');
  } catch {
    return null;
  }
}
