import type Stripe from 'stripe';
import type { SubscriptionSnapshot } from '../../domain/provider-snapshot';
import type { ProviderContext, SubscriptionPage } from '../types';
import { ProviderRejectedError } from '../errors';
import { call } from './errors';

const iso = (secs: number | null | undefined): string | null =>
  typeof secs === 'number' ? new Date(secs * 1000).toISOString() : null;

/** Stripe's statuses → the snapshot's word; null: not a subscription yet (`incomplete`: first payment pending). */
function statusOf(s: Stripe.Subscription): SubscriptionSnapshot['status'] | null {
  switch (s.status) {
    case 'trialing':
      return 'trialing';
    case 'active':
      return 'active';
    case 'past_due':
      return 'past_due';
    case 'canceled':
      return 'canceled';
    case 'unpaid':
    case 'incomplete_expired':
    case 'paused':
      return 'expired';
    default:
      return null;
  }
}

/** One subscription as the lifecycle needs it: ids, the metadata the checkout set (sku, app user), its dates. */
export function snapshotOf(s: Stripe.Subscription, mode: ProviderContext['mode']): SubscriptionSnapshot | null {
  const status = statusOf(s);
  if (!status) return null;
  const item = s.items?.data?.[0];
  const periodEnd =
    (s as unknown as { current_period_end?: number }).current_period_end ?? item?.current_period_end ?? null;
  const md = { ...(item?.price?.metadata ?? {}), ...(s.metadata ?? {}) };
  return {
    provider: 'psp_a',
    subscription_id: s.id,
    customer_id: typeof s.customer === 'string' ? s.customer : (s.customer?.id ?? null),
    app_user_id: md.app_user_id || null,
    sku: md.sku || null,
    mode,
    status,
    started_at: iso(s.start_date ?? s.created)!,
    trial_start: iso(s.trial_start),
    trial_end: iso(s.trial_end),
    current_period_end: iso(periodEnd),
    cancel_at: s.cancel_at_period_end ? (iso(s.cancel_at) ?? iso(periodEnd)) : iso(s.cancel_at),
    ended_at: iso(s.ended_at),
    status_since: status === 'canceled' ? iso(s.ended_at ?? s.canceled_at) : null,
  };
}

/** `GET /v1/subscriptions/{id}`: the subscription as Stripe holds it now; null when Stripe has none by that id. */
export async function getSubscriptionSnapshot(
  stripe: Stripe,
  ctx: ProviderContext,
  id: string,
): Promise<SubscriptionSnapshot | null> {
  try {
    return snapshotOf(await call(() => stripe.subscriptions.retrieve(id)), ctx.mode);
  } catch (err) {
    if (err instanceof ProviderRejectedError && err.status === 404) return null;
    throw err;
  }
}

/**
 * One page of `GET /v1/subscriptions?status=all` (Stripe hides canceled ones otherwise), newest
 * first; the cursor is the last id (`starting_after`).
 */
export async function listSubscriptionPage(
  stripe: Stripe,
  ctx: ProviderContext,
  cursor: string | null,
  limit: number,
): Promise<SubscriptionPage> {
  const page = await call(() =>
    stripe.subscriptions.list({ status: 'all', limit, ...(cursor ? { starting_after: cursor } : {}) }),
  );
  return {
    snapshots: page.data.map((s) => snapshotOf(s, ctx.mode)).filter((s): s is SubscriptionSnapshot => !!s),
    seen: page.data.length,
    next: page.has_more && page.data.length > 0 ? page.data[page.data.length - 1].id : null,
  };
}
