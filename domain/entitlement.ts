import type { SubscriptionView } from './subscription';

/**
 * Entitlement state: what the service grants, per app user. It differs from the
 * subscription status exactly during grace periods and refunds.
 */
export const ENTITLEMENT_STATES = ['active', 'grace_period', 'expired', 'revoked'] as const;
export type EntitlementState = (typeof ENTITLEMENT_STATES)[number];

/**
 * The "is premium" rule: an entitlement grants access while active or in its grace period. Its
 * state alone decides: the lifecycle and the store paths rewrite the state when a period or a
 * grace period runs out, so no expiry date is compared here. Written once: SQL that must say it
 * (`db/entitlements.ts`) builds its list from PREMIUM_STATES, and the SDK's offline fallback
 * (`sdk/src/billing.ts`, a separate package) mirrors it, each proved equal by a test.
 */
export const PREMIUM_STATES = ['active', 'grace_period'] as const satisfies readonly EntitlementState[];

export function isPremiumState(state: EntitlementState | string): boolean {
  return (PREMIUM_STATES as readonly string[]).includes(state);
}

/** A subscriber is premium when any of its entitlements grants access. */
export function isPremium(entitlements: readonly { state: EntitlementState | string }[]): boolean {
  return entitlements.some((e) => isPremiumState(e.state));
}

/** How long access continues after a failed renewal while the provider retries the payment. */
export const GRACE_PERIOD_DAYS = 7;
const DAY_MS = 86_400_000;

export interface EntitlementView {
  state: EntitlementState;
  expires_at: string | null;
  grace_until: string | null;
  /** When this answer changes by itself (a grace period or a paid period running out); null: never. */
  next_change_at: string | null;
}

const plusDays = (iso: string, days: number) => new Date(Date.parse(iso) + days * DAY_MS).toISOString();

/**
 * What a subscription grants at `now` (passed in: no clock here). A refund revokes at once; a
 * failed renewal keeps access for the grace period, then expires; a cancellation keeps access
 * to when it took effect: the provider's `ended_at` (an immediate cancellation: now), else the
 * end of the period already paid; a scheduled cancellation keeps access to its date, then
 * expires by the workflow's timer even if the provider's final event never comes.
 *
 * | subscription | condition at `now` | entitlement | next change |
 * |---|---|---|---|
 * | refunded | — | revoked | never |
 * | expired | — | expired | never |
 * | past_due | within GRACE_PERIOD_DAYS of the failure | grace_period | the grace end |
 * | past_due | grace over | expired | never |
 * | canceled | `ended_at ?? current_period_end` ahead | active | that time |
 * | canceled | that time passed, or none | expired | never |
 * | trialing, active | a scheduled `cancel_at` ahead | active | `cancel_at` |
 * | trialing, active | a scheduled `cancel_at` passed | expired | never |
 * | trialing, active | nothing scheduled | active | never |
 */
export function entitlementFor(sub: SubscriptionView, now: string): EntitlementView {
  switch (sub.status) {
    case 'refunded':
      return { state: 'revoked', expires_at: sub.status_since, grace_until: null, next_change_at: null };
    case 'expired':
      return { state: 'expired', expires_at: sub.status_since, grace_until: null, next_change_at: null };
    case 'past_due': {
      const until = plusDays(sub.status_since, GRACE_PERIOD_DAYS);
      return until > now
        ? { state: 'grace_period', expires_at: until, grace_until: until, next_change_at: until }
        : { state: 'expired', expires_at: until, grace_until: until, next_change_at: null };
    }
    case 'canceled': {
      const end = sub.ended_at ?? sub.current_period_end;
      return end && end > now
        ? { state: 'active', expires_at: end, grace_until: null, next_change_at: end }
        : { state: 'expired', expires_at: end ?? sub.status_since, grace_until: null, next_change_at: null };
    }
    default: {
      const end = sub.cancel_at;
      if (!end) return { state: 'active', expires_at: sub.current_period_end, grace_until: null, next_change_at: null };
      return end > now
        ? { state: 'active', expires_at: end, grace_until: null, next_change_at: end }
        : { state: 'expired', expires_at: end, grace_until: null, next_change_at: null };
    }
  }
}

/** The SDK's cache lifetime: weekly, or hourly while a trial runs. */
export const CACHE_TTL_SECONDS = { default: 604_800, trial: 3_600 } as const;
export function cacheTtlSeconds(subs: readonly Pick<SubscriptionView, 'status'>[]): number {
  return subs.some((s) => s.status === 'trialing') ? CACHE_TTL_SECONDS.trial : CACHE_TTL_SECONDS.default;
}
