/** The event vocabulary: what tenants register at the provider, and the canonical kinds every provider's events map to. */

/** Event types the tenant registers at the web provider (spec: Events → Inbound provider events). */
export const REGISTERED_EVENT_TYPES = [
  'customer.subscription.created',
  'customer.subscription.updated',
  'customer.subscription.deleted',
  'invoice.payment_succeeded',
  'invoice.payment_failed',
  'payment_intent.succeeded',
  'payment_intent.payment_failed',
  'charge.refunded',
] as const;
export type RegisteredEventType = (typeof REGISTERED_EVENT_TYPES)[number];

/** One canonical kind per provider event, whatever provider it came from. */
export const CANONICAL_EVENT_KINDS = [
  'subscription_created',
  'subscription_updated',
  'subscription_canceled',
  'payment_succeeded',
  'payment_failed',
  'refunded',
  'renewed',
  'expired',
  'grace_period',
  'test',
  'other',
] as const;
export type CanonicalEventKind = (typeof CANONICAL_EVENT_KINDS)[number];

/** Webhook delivery status (DESIGN.md): stored, then processed or failed with a reason. */
export const WEBHOOK_DELIVERY_STATUSES = ['received', 'processed', 'failed'] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];
