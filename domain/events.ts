/** The event vocabulary: the canonical kinds every provider's events map to, and the bounds on what an event brings. */

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

/**
 * Webhook delivery status, as GET /v1/webhooks lists it: stored (received), then processed, or failed with a reason.
 */
export const WEBHOOK_DELIVERY_STATUSES = ['received', 'processed', 'failed'] as const;

/**
 * Bounds on the ids an event brings, checked at receipt: they become parts of workflow ids and
 * unique keys, so an id past them is refused by name instead of being stored and stalling later.
 * Provider ids are far shorter (Stripe's are under 40 characters); a Play purchase token is
 * hashed before it is used, so it only has to fit a request.
 */
export const ID_LIMITS = { event_id: 255, customer_id: 200, subscription_id: 200, purchase_token: 4096 } as const;

export function eventIdProblem(
  e: { id: string; customer_id?: string | null; subscription_id?: string | null },
  store: boolean,
): { param: string; detail: string } | null {
  const checks: [string, string | null | undefined, number][] = [
    ['event_id', e.id, ID_LIMITS.event_id],
    ['customer_id', e.customer_id, ID_LIMITS.customer_id],
    store
      ? ['purchase_token', e.subscription_id, ID_LIMITS.purchase_token]
      : ['subscription_id', e.subscription_id, ID_LIMITS.subscription_id],
  ];
  for (const [param, value, max] of checks) {
    if (value != null && value.length > max)
      return { param, detail: `The event's ${param} is ${value.length} characters long; at most ${max} are accepted.` };
  }
  if (!e.id) return { param: 'event_id', detail: 'The event names no id.' };
  return null;
}
