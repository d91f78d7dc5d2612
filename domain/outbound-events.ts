/**
 * The events a tenant's endpoint can receive (docs/outbound-webhooks.md gives each body). The
 * database emits them (the schema's triggers and `record_outbound_event`); this list is what
 * the API accepts as an endpoint's `event_types` and what the OpenAPI document describes.
 */
export const OUTBOUND_EVENT_TYPES = [
  'entitlement.active',
  'entitlement.grace_period',
  'entitlement.expired',
  'entitlement.revoked',
  'subscription.status_changed',
  'subscription.reconciled',
  'sync_run.finished',
  'readiness.changed',
  'inbound_delivery.failed',
  // An id merged into a customer: a sign-in from an anonymous id, or the tenant's backend (docs/transfers.md).
  'customer.merged',
  // Restores that move a purchase between app users (docs/transfers.md).
  'transfer.pending',
  'transfer.completed',
  'transfer.undone',
] as const;
export type OutboundEventType = (typeof OUTBOUND_EVENT_TYPES)[number];

/** The `version` field of every body; a change of shape raises it. */
export const OUTBOUND_EVENT_VERSION = 1;

export const OUTBOUND_DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;

/**
 * How long the previous secret keeps signing after a rotation, unless the caller says otherwise; and the most it may.
 */
export const ROTATION_OVERLAP_SECONDS = { default: 86_400, max: 7 * 86_400 } as const;

/**
 * Why a tenant-supplied URL is refused before it is ever fetched (null: acceptable). Absolute
 * http(s) only, no credentials in it (they would be shown and logged), no fragment.
 */
export function endpointUrlProblem(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'url must be an absolute http or https URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'url must use http or https';
  if (url.username || url.password) return 'url must not carry credentials';
  if (url.hash) return 'url must not carry a fragment';
  return null;
}
