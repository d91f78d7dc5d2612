import type { SubscriptionSnapshot } from '../../domain/provider-snapshot';
import type { ProviderContext, SubscriptionPage } from '../types';
import { isNoSuchId, type RazorpayClient } from './client';
import { notesOf, type RzpPlan } from './catalogue';

type Obj = Record<string, unknown>;
const str = (v: unknown): string | null => (typeof v === 'string' && v ? v : null);
const iso = (secs: unknown): string | null =>
  typeof secs === 'number' && secs > 0 ? new Date(secs * 1000).toISOString() : null;

/**
 * Razorpay's statuses → the snapshot's word. `created`: not authorised yet (left out);
 * `authenticated`: authorised, first charge at start_at (a trial); `pending`: a failed charge
 * being retried; `halted`, `completed`, `expired`, `paused`: no access.
 */
const STATUS: Record<string, SubscriptionSnapshot['status']> = {
  authenticated: 'trialing',
  active: 'active',
  pending: 'past_due',
  cancelled: 'canceled',
  halted: 'expired',
  completed: 'expired',
  expired: 'expired',
  paused: 'expired',
};

/**
 * The SKU a plan names: its notes, which our sync writes (Razorpay plans cannot be edited afterwards);
 * null when Razorpay has no plan by that id or it names none. The subscription's own notes come from
 * the buyer's checkout and are never read for the SKU.
 */
export async function skuOfPlan(client: RazorpayClient, planId: string): Promise<string | null> {
  try {
    return str(notesOf(await client.call<RzpPlan>('GET', `/v1/plans/${encodeURIComponent(planId)}`)).sku);
  } catch (err) {
    if (isNoSuchId(err)) return null;
    throw err;
  }
}

/** The plan a subscription is on; null when Razorpay has no subscription by that id. */
export async function planOfSubscription(client: RazorpayClient, id: string): Promise<string | null> {
  try {
    return str((await client.call<Obj>('GET', `/v1/subscriptions/${encodeURIComponent(id)}`)).plan_id);
  } catch (err) {
    if (isNoSuchId(err)) return null;
    throw err;
  }
}

/** Each plan's SKU, one read per plan id. */
async function skusOfPlans(client: RazorpayClient, subs: Obj[]): Promise<Map<string, string | null>> {
  const ids = [...new Set(subs.map((s) => str(s.plan_id)).filter((id): id is string => !!id))];
  return new Map(await Promise.all(ids.map(async (id) => [id, await skuOfPlan(client, id)] as const)));
}

/**
 * One Razorpay subscription entity as the lifecycle needs it: its plan names the sku, notes the app user (never the
 * email).
 */
export function snapshotOf(
  s: Obj,
  mode: ProviderContext['mode'],
  planSkus: Map<string, string | null>,
): SubscriptionSnapshot | null {
  const status = STATUS[String(s.status)];
  const id = str(s.id);
  if (!status || !id) return null;
  const notes = s.notes && typeof s.notes === 'object' && !Array.isArray(s.notes) ? (s.notes as Obj) : {};
  const trial = status === 'trialing';
  return {
    provider: 'psp_c',
    subscription_id: id,
    customer_id: str(s.customer_id),
    app_user_id: str(notes.app_user_id),
    sku: planSkus.get(str(s.plan_id) ?? '') ?? null,
    mode,
    status,
    started_at: iso(s.created_at) ?? new Date(0).toISOString(),
    trial_start: trial ? iso(s.created_at) : null,
    trial_end: trial ? iso(s.start_at) : null,
    current_period_end: iso(s.current_end) ?? (trial ? iso(s.start_at) : null),
    cancel_at: null,
    ended_at: status === 'canceled' ? iso(s.ended_at) : null,
    status_since: status === 'canceled' ? iso(s.ended_at) : null,
  };
}

/** Razorpay's `GET /v1/subscriptions/{id}`; null when Razorpay has none by that id. */
export async function getSubscriptionSnapshot(
  client: RazorpayClient,
  ctx: ProviderContext,
  id: string,
): Promise<SubscriptionSnapshot | null> {
  try {
    const sub = await client.call<Obj>('GET', `/v1/subscriptions/${encodeURIComponent(id)}`);
    return snapshotOf(sub, ctx.mode, await skusOfPlans(client, [sub]));
  } catch (err) {
    if (isNoSuchId(err)) return null;
    throw err;
  }
}

/** One page of Razorpay's `GET /v1/subscriptions` (`count` up to 100, `skip`), the cursor being the next skip. */
export async function listSubscriptionPage(
  client: RazorpayClient,
  ctx: ProviderContext,
  cursor: string | null,
  limit: number,
): Promise<SubscriptionPage> {
  const count = Math.min(limit, 100);
  const skip = cursor ? Number(cursor) : 0;
  const page = await client.call<{ items?: Obj[] }>('GET', '/v1/subscriptions', { query: { count, skip } });
  const rows = Array.isArray(page.items) ? page.items : [];
  const planSkus = await skusOfPlans(client, rows);
  return {
    snapshots: rows.map((s) => snapshotOf(s, ctx.mode, planSkus)).filter((s): s is SubscriptionSnapshot => !!s),
    seen: rows.length,
    next: rows.length === count ? String(skip + count) : null,
  };
}
