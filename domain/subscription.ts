import type { CanonicalEventKind } from './events';
import type { Mode } from './providers';

/**
 * Subscription record status: what a provider bills (docs/lifecycles.md fixes the values the
 * spec leaves open), derived from the provider's events.
 *
 * Providers deliver out of order and more than once. So the state is the *set* of events seen
 * (deduplicated by event id), and every field is derived from that set by the events' own
 * timestamps: any permutation of a sequence, with any duplicates, converges to the same state.
 * `applyEvent` is the `(state, event) → (state, effects)` step the entity workflow runs.
 */
export const SUBSCRIPTION_STATUSES = ['trialing', 'active', 'past_due', 'canceled', 'refunded', 'expired'] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

/** A provider event reduced to what the lifecycle needs (no payload). */
export interface LifecycleEvent {
  id: string;
  kind: CanonicalEventKind;
  occurred_at: string;
  mode: Mode;
  subscription_id: string | null;
  customer_id: string | null;
  /**
   * The event named the buyer's email. The address itself never enters a workflow: the receiver
   * keeps it on the delivery row, and the write looks it up by the deciding event's id.
   */
  has_email?: boolean;
  app_user_id?: string | null;
  sku?: string | null;
  trial_start?: string | null;
  trial_end?: string | null;
  current_period_end?: string | null;
  /**
   * A cancellation's effective time (Stripe `ended_at`, Razorpay `ended_at`, Paddle `canceled_at`):
   * when access ended. Absent when the event does not say: access then runs to the period end.
   */
  ended_at?: string | null;
  /**
   * A scheduled cancellation (Stripe `cancel_at_period_end`/`cancel_at`, Paddle's scheduled
   * change, Razorpay `cancel_at_cycle_end`): access ends then unless it is lifted. Present only on
   * events that speak about it; null there means "not scheduled" (the customer resumed).
   */
  cancel_at?: string | null;
  /** The buyer's country (ISO 3166-1 alpha-2) when the provider's event says it (domain/country.ts). */
  country?: string | null;
  /**
   * Where the event came from when no provider notification sent it: a backfill (`import`) or a
   * repair after comparing with the provider (`reconciliation`) — domain/provider-snapshot.ts.
   * Absent: a provider notification.
   */
  source?: EventSource;
}

export type EventSource = 'import' | 'reconciliation';

export interface SubscriptionView {
  external_id: string;
  customer_id: string | null;
  status: SubscriptionStatus;
  mode: Mode;
  /** The latest event that named the buyer's email: the write reads the address from its delivery. */
  email_event_id: string | null;
  app_user_id: string | null;
  sku: string | null;
  trial_started_at: string | null;
  /** When the trial ends (or ended): set once known, kept through renewal and conversion. */
  trial_ended_at: string | null;
  current_period_end: string | null;
  canceled_at: string | null;
  /** When a cancellation took effect, as the provider said (null: not said; access runs to the period end). */
  ended_at?: string | null;
  /** A scheduled cancellation still standing (the latest event speaking about it set it). */
  cancel_at?: string | null;
  /** The buyer's country, from the latest event that said one; absent when none did. */
  country?: string;
  /** Since when the status holds (the deciding event's time). */
  status_since: string;
  event_ids: string[];
}

/** The status an event kind moves a subscription to; null: it moves nothing. */
const MOVES: Partial<Record<CanonicalEventKind, SubscriptionStatus>> = {
  subscription_created: 'active',
  payment_succeeded: 'active',
  renewed: 'active',
  payment_failed: 'past_due',
  grace_period: 'past_due',
  subscription_canceled: 'canceled',
  refunded: 'refunded',
  expired: 'expired',
};

/**
 * Events at the same instant (a checkout sends three in one second) are ordered by how final
 * they are, so a refund or cancellation is never undone by a payment stamped the same second.
 */
const PRECEDENCE: Record<SubscriptionStatus, number> = {
  trialing: 0,
  active: 1,
  past_due: 2,
  canceled: 3,
  expired: 4,
  refunded: 5,
};

export function statusMove(kind: CanonicalEventKind): SubscriptionStatus | null {
  return MOVES[kind] ?? null;
}

const later = (a: string | null | undefined, b: string | null | undefined) =>
  !a ? (b ?? null) : !b ? a : a >= b ? a : b;
const earlier = (a: string | null | undefined, b: string | null | undefined) =>
  !a ? (b ?? null) : !b ? a : a <= b ? a : b;

function decisive(a: LifecycleEvent, b: LifecycleEvent): LifecycleEvent {
  if (a.occurred_at !== b.occurred_at) return a.occurred_at > b.occurred_at ? a : b;
  const pa = PRECEDENCE[statusMove(a.kind)!];
  const pb = PRECEDENCE[statusMove(b.kind)!];
  if (pa !== pb) return pa > pb ? a : b;
  return a.id > b.id ? a : b;
}

/**
 * Which subscription an event belongs to: its own id, else (payment intents and charges name
 * only the customer) the customer's latest subscription seen, by its first event's time.
 */
function assign(events: readonly LifecycleEvent[]): Map<string, LifecycleEvent[]> {
  const firstSeen = new Map<string, string>();
  const customerOf = new Map<string, string | null>();
  for (const e of events) {
    if (!e.subscription_id) continue;
    firstSeen.set(e.subscription_id, earlier(firstSeen.get(e.subscription_id), e.occurred_at)!);
    if (e.customer_id) customerOf.set(e.subscription_id, e.customer_id);
  }
  const latestFor = (customer: string | null): string | null => {
    let best: string | null = null;
    for (const [sub, at] of firstSeen) {
      if (customerOf.get(sub) !== customer) continue;
      if (!best || at > firstSeen.get(best)! || (at === firstSeen.get(best)! && sub > best)) best = sub;
    }
    return best;
  };
  const out = new Map<string, LifecycleEvent[]>();
  for (const e of events) {
    const sub = e.subscription_id ?? latestFor(e.customer_id);
    if (sub) out.set(sub, [...(out.get(sub) ?? []), e]);
  }
  return out;
}

/** Every subscription the events speak of, derived from the whole set (order-free). */
export function deriveSubscriptions(events: readonly LifecycleEvent[]): SubscriptionView[] {
  const unique = [...new Map(events.map((e) => [e.id, e])).values()];
  const views: SubscriptionView[] = [];
  for (const [external_id, evs] of [...assign(unique)].sort(([a], [b]) => a.localeCompare(b))) {
    const moving = evs.filter((e) => statusMove(e.kind));
    if (moving.length === 0) continue;
    const decider = moving.reduce(decisive);
    const newest = evs.reduce((a, b) =>
      b.occurred_at > a.occurred_at || (b.occurred_at === a.occurred_at && b.id > a.id) ? b : a,
    );
    let status = statusMove(decider.kind)!;
    const trialEnd = evs.reduce<string | null>((t, e) => later(t, e.trial_end), null);
    // An active subscription still inside its trial is trialing.
    if (status === 'active' && trialEnd && trialEnd > decider.occurred_at) status = 'trialing';
    const latestWith = (has: (e: LifecycleEvent) => unknown): LifecycleEvent | undefined =>
      evs
        .filter(has)
        .sort((a, b) =>
          a.occurred_at === b.occurred_at ? a.id.localeCompare(b.id) : a.occurred_at.localeCompare(b.occurred_at),
        )
        .at(-1);
    const pick = <K extends 'app_user_id' | 'sku' | 'customer_id'>(k: K): string | null =>
      (latestWith((e) => e[k])?.[k] as string | undefined) ?? null;
    const emailEvent = latestWith((e) => e.has_email);
    const country = latestWith((e) => e.country)?.country;
    const cancel =
      evs
        .filter((e) => e.kind === 'subscription_canceled')
        .map((e) => e.occurred_at)
        .sort()[0] ?? null;
    // Only events that carry the fields speak: a scheduled cancellation stands until a later event lifts it.
    const scheduled = latestWith((e) => e.cancel_at !== undefined);
    const ended = evs.reduce<string | null>(
      (t, e) => (e.kind === 'subscription_canceled' ? earlier(t, e.ended_at) : t),
      null,
    );
    views.push({
      external_id,
      customer_id: pick('customer_id'),
      status,
      mode: newest.mode,
      email_event_id: emailEvent?.id ?? null,
      app_user_id: pick('app_user_id'),
      sku: pick('sku'),
      trial_started_at: evs.reduce<string | null>((t, e) => earlier(t, e.trial_start), null),
      trial_ended_at: trialEnd,
      current_period_end: evs.reduce<string | null>((t, e) => later(t, e.current_period_end), null),
      canceled_at: cancel,
      ...(ended ? { ended_at: ended } : {}),
      ...(scheduled?.cancel_at ? { cancel_at: scheduled.cancel_at } : {}),
      ...(country ? { country } : {}),
      status_since: decider.occurred_at,
      event_ids: evs.map((e) => e.id).sort(),
    });
  }
  return views;
}

export interface LifecycleState {
  events: LifecycleEvent[];
}

export type LifecycleEffect =
  { type: 'write'; subscriptions: SubscriptionView[] } | { type: 'ignore_duplicate'; event_id: string };

/** One step: a seen event changes nothing; a new one re-derives, and the derived records are written. */
export function applyEvent(
  state: LifecycleState,
  event: LifecycleEvent,
): { state: LifecycleState; effects: LifecycleEffect[] } {
  if (state.events.some((e) => e.id === event.id))
    return { state, effects: [{ type: 'ignore_duplicate', event_id: event.id }] };
  const next = { events: [...state.events, event] };
  return { state: next, effects: [{ type: 'write', subscriptions: deriveSubscriptions(next.events) }] };
}
