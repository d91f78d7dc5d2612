/**
 * Subscription record status: what a provider bills (DESIGN.md fixes the values the spec
 * leaves open). The state machine over canonical events lands here as well.
 */
export const SUBSCRIPTION_STATUSES = ['trialing', 'active', 'past_due', 'canceled', 'refunded', 'expired'] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];
