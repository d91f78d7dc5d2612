import type { CanonicalEventKind } from './events';
import type { Mode, ProviderId } from './providers';
import type { EventSource, LifecycleEvent } from './subscription';

/**
 * A provider's current view of one subscription, as its list or lookup API answers it (Stripe
 * `GET /v1/subscriptions`, Paddle `GET /subscriptions`, Razorpay `GET /v1/subscriptions`),
 * reduced by the adapter to the few facts the lifecycle needs. Import (backfill) and
 * reconciliation both turn it into lifecycle events with `snapshotEvents`, so a subscription
 * brought in by either path is derived by the same rules as one a webhook told us about.
 */
export interface SubscriptionSnapshot {
  provider: ProviderId;
  subscription_id: string;
  customer_id: string | null;
  app_user_id: string | null;
  sku: string | null;
  mode: Mode;
  /**
   * The provider's state in one word: `trialing` and `active` grant access, `past_due` is a
   * failed renewal the provider still retries (grace), `canceled` is a cancellation that took
   * effect (`ended_at`, else access runs to `current_period_end`), `refunded` revoked, `expired`
   * ran out. A cancellation scheduled for later is `active` with `cancel_at`.
   */
  status: 'trialing' | 'active' | 'past_due' | 'canceled' | 'refunded' | 'expired';
  /** When the subscription started (its first event's time). */
  started_at: string;
  trial_start?: string | null;
  trial_end?: string | null;
  current_period_end?: string | null;
  /** A cancellation scheduled for later; null: none. */
  cancel_at?: string | null;
  /** When access ended, for an effective cancellation (Stripe `ended_at`). */
  ended_at?: string | null;
  /**
   * Since when the current status holds, when the provider says (a failed renewal's time, a
   * cancellation's time); else the time the snapshot was read.
   */
  status_since?: string | null;
}

const KIND_OF: Record<SubscriptionSnapshot['status'], CanonicalEventKind> = {
  trialing: 'subscription_created',
  active: 'renewed',
  past_due: 'grace_period',
  canceled: 'subscription_canceled',
  refunded: 'refunded',
  expired: 'expired',
};

const epoch = (iso: string | null | undefined) => (iso ? String(Math.floor(Date.parse(iso) / 1000)) : '-');

/**
 * The events that bring the lifecycle to what the snapshot says, read at `readAt`.
 *
 * Two events at most: the start (so the subscription's first-seen time and trial are known) and
 * the current state. Their ids are made from the facts they state, not from the read time, so
 * the same provider state read twice (an import re-run, a reconciliation finding nothing new)
 * gives the same ids, which the lifecycle's deduplication drops: a re-run changes nothing. A
 * changed state gives a new id, and since it is stamped with the read time (or the provider's
 * own time for the status), it outranks the older events it corrects.
 */
export function snapshotEvents(snap: SubscriptionSnapshot, readAt: string, source: EventSource): LifecycleEvent[] {
  const common = {
    mode: snap.mode,
    subscription_id: snap.subscription_id,
    customer_id: snap.customer_id,
    app_user_id: snap.app_user_id,
    sku: snap.sku,
    source,
  };
  const tag = source === 'import' ? 'imp' : 'rec';
  const start: LifecycleEvent = {
    ...common,
    id: `${tag}_start_${snap.subscription_id}`,
    kind: 'subscription_created',
    occurred_at: earliest(snap.started_at, readAt),
    trial_start: snap.trial_start ?? null,
    trial_end: snap.trial_end ?? null,
    current_period_end: snap.current_period_end ?? null,
  };
  const kind = KIND_OF[snap.status];
  // A reconciliation applies a state found to differ from what is held: the provider says it
  // holds at the read, so it is stamped with the read and outranks what it corrects, even when the
  // provider's own time (whole seconds) is earlier than the held state's last read. An import
  // keeps the provider's time, so it never outranks a webhook the service already applied.
  const at =
    snap.status === 'trialing' || snap.status === 'active' || source === 'reconciliation'
      ? readAt
      : earliest(snap.status_since ?? readAt, readAt);
  const state: LifecycleEvent = {
    ...common,
    id: [
      tag,
      snap.status,
      epoch(snap.current_period_end),
      epoch(snap.cancel_at),
      epoch(snap.ended_at),
      snap.subscription_id,
    ].join('_'),
    kind,
    occurred_at: at,
    trial_end: snap.trial_end ?? null,
    current_period_end: snap.current_period_end ?? null,
    // Only a live subscription speaks about a schedule: null lifts one a lost webhook left standing.
    ...(snap.status === 'trialing' || snap.status === 'active' ? { cancel_at: snap.cancel_at ?? null } : {}),
    ...(snap.status === 'canceled' ? { ended_at: snap.ended_at ?? null } : {}),
  };
  return [start, state];
}

const earliest = (a: string, b: string) => (a <= b ? a : b);
