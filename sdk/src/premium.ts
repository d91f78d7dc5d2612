/**
 * The service's "is premium" rule, mirrored: an entitlement grants access while its state is
 * active or in its grace period (its state alone decides; no expiry date is compared). The SDK is
 * a separate package and cannot import the service's `domain/entitlement.ts` (PREMIUM_STATES,
 * isPremiumState), so the rule is repeated here; test/domain/premium-rule.test.ts fails if the
 * two ever disagree on any state.
 */
export const PREMIUM_STATES: readonly string[] = ['active', 'grace_period'];

export function isPremiumState(state: unknown): boolean {
  return typeof state === 'string' && PREMIUM_STATES.includes(state);
}
