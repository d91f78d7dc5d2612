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
