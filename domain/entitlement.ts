import type { SubscriptionView } from './subscription';

/**
 * Entitlement state: what the service grants, per app user. It differs from the
 * subscription status exactly during grace periods and refunds.
 */
export const ENTITLEMENT_STATES = ['active', 'grace_period', 'expired', 'revoked'] as const;
export type EntitlementState = (typeof ENTITLEMENT_STATES)[number];

/** The "is premium" rule: an entitlement grants access while active or in its grace period. */
export function isPremiumState(state: EntitlementState | string): boolean {
  return state === 'active' || state === 'grace_period';
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
 * to the end of the period already paid.
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
      const end = sub.current_period_end;
      return end && end > now
        ? { state: 'active', expires_at: end, grace_until: null, next_change_at: end }
        : { state: 'expired', expires_at: end ?? sub.status_since, grace_until: null, next_change_at: null };
    }
    default:
      return { state: 'active', expires_at: sub.current_period_end, grace_until: null, next_change_at: null };
  }
}

/** The SDK's cache lifetime: weekly, or hourly while a trial runs. */
export const CACHE_TTL_SECONDS = { default: 604_800, trial: 3_600 } as const;
export function cacheTtlSeconds(subs: readonly Pick<SubscriptionView, 'status'>[]): number {
  return subs.some((s) => s.status === 'trialing') ? CACHE_TTL_SECONDS.trial : CACHE_TTL_SECONDS.default;
}
