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
  return decideEntitlement(sub, now).view;
}

/**
 * Which row of the table above decided (the customer page's "why", docs/support.md): named so a
 * person can read it, and computed by the very function the workflow runs.
 */
export const ENTITLEMENT_RULES = [
  'refund',
  'ended',
  'grace_period',
  'grace_over',
  'canceled_access_to_period_end',
  'canceled_ended',
  'scheduled_cancellation',
  'scheduled_cancellation_passed',
  'renewing',
] as const;
export type EntitlementRule = (typeof ENTITLEMENT_RULES)[number];

/** The subscription facts the rule reads (what `entitlementFor` is given; the record keeps these). */
export type EntitlementFacts = Pick<
  SubscriptionView,
  'status' | 'status_since' | 'current_period_end' | 'ended_at' | 'cancel_at'
>;

/** The rule table as one decision: the view the workflow writes and the rule that made it. */
export function decideEntitlement(
  sub: EntitlementFacts,
  now: string,
): { view: EntitlementView; rule: EntitlementRule } {
  switch (sub.status) {
    case 'refunded':
      return {
        rule: 'refund',
        view: { state: 'revoked', expires_at: sub.status_since, grace_until: null, next_change_at: null },
      };
    case 'expired':
      return {
        rule: 'ended',
        view: { state: 'expired', expires_at: sub.status_since, grace_until: null, next_change_at: null },
      };
    case 'past_due': {
      const until = plusDays(sub.status_since, GRACE_PERIOD_DAYS);
      return until > now
        ? {
            rule: 'grace_period',
            view: { state: 'grace_period', expires_at: until, grace_until: until, next_change_at: until },
          }
        : {
            rule: 'grace_over',
            view: { state: 'expired', expires_at: until, grace_until: until, next_change_at: null },
          };
    }
    case 'canceled': {
      const end = sub.ended_at ?? sub.current_period_end;
      return end && end > now
        ? {
            rule: 'canceled_access_to_period_end',
            view: { state: 'active', expires_at: end, grace_until: null, next_change_at: end },
          }
        : {
            rule: 'canceled_ended',
            view: { state: 'expired', expires_at: end ?? sub.status_since, grace_until: null, next_change_at: null },
          };
    }
    default: {
      const end = sub.cancel_at;
      if (!end)
        return {
          rule: 'renewing',
          view: { state: 'active', expires_at: sub.current_period_end, grace_until: null, next_change_at: null },
        };
      return end > now
        ? {
            rule: 'scheduled_cancellation',
            view: { state: 'active', expires_at: end, grace_until: null, next_change_at: end },
          }
        : {
            rule: 'scheduled_cancellation_passed',
            view: { state: 'expired', expires_at: end, grace_until: null, next_change_at: null },
          };
    }
  }
}

/** The SDK's cache lifetime: weekly, or hourly while a trial runs. */
export const CACHE_TTL_SECONDS = { default: 604_800, trial: 3_600 } as const;
export function cacheTtlSeconds(subs: readonly Pick<SubscriptionView, 'status'>[]): number {
  return subs.some((s) => s.status === 'trialing') ? CACHE_TTL_SECONDS.trial : CACHE_TTL_SECONDS.default;
}
