import { z } from 'zod';
import { ENTITLEMENT_STATES } from '../../domain/entitlement';
import { OUTBOUND_EVENT_VERSION, type OutboundEventType } from '../../domain/outbound-events';
import { PROVIDERS } from '../../domain/providers';
import { SUBSCRIPTION_STATUSES } from '../../domain/subscription';

/**
 * The body of every outbound event type, once: the OpenAPI document's `webhooks` section is made
 * from these (api/openapi.ts), and the tests check deliveries against them. The database writes
 * the bodies (the schema's triggers, 029's grants, 030's sequence and snapshot); a change there is a change here,
 * with `version` raised when a field changes meaning (added fields keep it).
 */
const when = z.string().nullable().describe('ISO 8601');
const provider = z.enum(PROVIDERS);

/**
 * What every event about a customer carries besides its own fields: a receiver
 * that keeps the snapshot of the highest `sequence` is right whatever order deliveries arrive in.
 */
const customerFields = {
  known_as: z
    .array(z.string())
    .optional()
    .describe(
      'the customer’s other ids (an anonymous id that signed in, an app user merged in; oldest first, at most 10): `app_user_id` is the id they were merged into, and the rows of this event may be stored under one of these. Absent on events recorded before the service named merged ids (those name the id their rows were stored under, merged or not): their hash covers them as they are, so they stay without it; read its absence as “not said”, not as []',
    ),
  sequence: z
    .number()
    .int()
    .describe('one more than the previous event about this app user: keep the highest you have seen'),
  entitlements: z
    .array(
      z.object({
        source: z.enum(['paid', 'grant']),
        grant_id: z.string().optional(),
        provider: provider.nullable(),
        product_id: z.string().nullable(),
        sku: z.string().nullable(),
        state: z.enum(ENTITLEMENT_STATES),
        is_sandbox: z.boolean(),
        expires_at: when,
        grace_until: when,
      }),
    )
    .describe('the app user’s whole entitlement snapshot as of this event: paid entitlements and running grants'),
  prev_hash: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .describe('the `hash` of the previous event about this app user (64 zeros for the first): docs/event-proofs.md'),
  hash: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .describe('hex SHA-256 of the RFC 8785 canonical JSON of this `data` without `hash`, in its proof form'),
  proof: z
    .literal(2)
    .optional()
    .describe(
      'the proof form `hash` covers: 2, the app user ids and any email as their SHA-256 (absent on events recorded before it: emails only)',
    ),
};

const entitlementData = z.object({
  app_user_id: z
    .string()
    .describe(
      'the app user the entitlement belongs to (a purchase made without one: the buyer’s email or customer id)',
    ),
  state: z.enum(ENTITLEMENT_STATES),
  previous_state: z.enum(ENTITLEMENT_STATES).nullable().describe('null: the entitlement is new'),
  source: z.enum(['paid', 'grant']).describe('paid: a purchase; grant: access given by hand'),
  grant_id: z.string().optional().describe('the grant, when source is grant'),
  reason: z
    .union([z.enum(SUBSCRIPTION_STATUSES), z.literal('grant')])
    .nullable()
    .describe(
      'the status of the subscription that led here: refunded → revoked, canceled or expired → expired, past_due → grace_period; grant for a grant',
    ),
  provider: provider.nullable().describe('null for a grant'),
  product_id: z.string().nullable(),
  sku: z.string().nullable(),
  subscription_id: z.string().nullable(),
  is_sandbox: z.boolean(),
  expires_at: when,
  grace_until: when,
  token_invalidated: z
    .boolean()
    .optional()
    .describe(
      'true: this change took away or shortened access that an entitlement token issued before it may still state; distrust this app user’s earlier tokens (docs/entitlement-tokens.md)',
    ),
  ...customerFields,
});

/** A transfer's events (docs/transfers.md), about the app user who holds the purchase afterwards. */
const transferData = z.object({
  transfer_id: z.string().describe('the transfer, as GET /v1/transfers/{id} answers it'),
  status: z.enum(['pending', 'completed', 'undone']),
  app_user_id: z
    .string()
    .describe('the app user this event is about: who holds the purchase now (pending: who asked for it)'),
  previous_app_user_id: z
    .string()
    .describe('who held it before this event (pending: who still holds it until a decision)'),
  from_app_user_id: z.string(),
  to_app_user_id: z.string(),
  provider,
  is_sandbox: z.boolean(),
  undo_until: when.describe('until when an undo is allowed (completed); ISO 8601'),
  ...customerFields,
});

/** A merge (docs/transfers.md): on the surviving customer's chain; the merged id's own chain ends at it. */
const mergedData = z.object({
  app_user_id: z.string().describe('the customer that remains: the merged id answers it from now on'),
  merged_app_user_id: z
    .string()
    .describe('the id merged in (an anonymous id that signed in, or an app user the tenant’s backend merged)'),
  merged_sequence: z
    .number()
    .int()
    .describe(
      'the last `sequence` of the merged id’s own events, which end here (0: it had none); a receiver that followed that id applies up to it, then follows `app_user_id` from this event on',
    ),
  merged_hash: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .nullable()
    .describe('the `hash` of that last event (null: none): this event’s hash covers it, so the two chains link'),
  ...customerFields,
});

const DATA: Record<OutboundEventType, { summary: string; data: z.ZodType }> = {
  'entitlement.active': { summary: 'A user became (or is again) premium', data: entitlementData },
  'entitlement.grace_period': {
    summary: 'A renewal failed; access continues while the provider retries',
    data: entitlementData,
  },
  'entitlement.expired': { summary: 'Access ended (canceled or ran out)', data: entitlementData },
  'entitlement.revoked': { summary: 'Access was taken back (refund)', data: entitlementData },
  'subscription.status_changed': {
    summary: 'A subscription record was created or changed status',
    data: z.object({
      subscription_id: z.string(),
      provider,
      external_id: z.string(),
      status: z.enum(SUBSCRIPTION_STATUSES),
      previous_status: z.enum(SUBSCRIPTION_STATUSES).nullable(),
      app_user_id: z.string().nullable(),
      product_id: z.string().nullable(),
      sku: z.string().nullable(),
      mode: z.enum(['live', 'test']),
      current_period_end: when,
      canceled_at: when,
      ...customerFields,
    }),
  },
  'subscription.reconciled': {
    summary: "A subscription's provider state differed from what the service held, and was applied (a repair)",
    data: z.object({
      reconciliation_id: z.string().describe('the repair, as GET /v1/reconciliations lists it'),
      run_id: z.string(),
      provider,
      external_id: z.string().describe("the provider's subscription id"),
      app_user_id: z.string().nullable(),
      held: z
        .object({ status: z.string(), current_period_end: when })
        .nullable()
        .describe('what the service held; null: nothing'),
      provider_state: z.object({ status: z.string(), current_period_end: when, cancel_at: when }),
      applied: z.array(z.object({ id: z.string(), kind: z.string() })),
      ...z.object(customerFields).partial().shape,
    }),
  },
  'sync_run.finished': {
    summary: 'A catalogue sync run ended',
    data: z.object({
      run_id: z.string(),
      kind: z.enum(['sync', 'product-sync']),
      status: z.enum(['succeeded', 'failed']),
      finished_at: when,
      result: z.unknown(),
    }),
  },
  'readiness.changed': {
    summary: 'What GET /v1/readiness answers changed (judged when a sync run ends)',
    data: z.object({
      previous: z.unknown().describe('the snapshot before: `summary` and each provider’s live_ready and test_ready'),
      current: z.unknown().describe('the snapshot now, same shape'),
    }),
  },
  'inbound_delivery.failed': {
    summary: 'A provider webhook was refused or could not be processed',
    data: z.object({
      delivery_id: z.string(),
      provider,
      event_id: z.string(),
      event_type: z.string(),
      mode: z.enum(['live', 'test']).nullable(),
      reason: z.string().nullable(),
    }),
  },
  'customer.merged': {
    summary: 'Another id was merged into this customer: both answer it from now on, and its events are this one’s',
    data: mergedData,
  },
  'transfer.pending': {
    summary: 'A restore asked to move a purchase another app user holds; it waits for approve or reject',
    data: transferData,
  },
  'transfer.completed': {
    summary: 'A purchase and its access moved to another app user (at once, or approved)',
    data: transferData,
  },
  'transfer.undone': {
    summary: 'A transfer was undone: the purchase and its access are back with the app user who held them',
    data: transferData,
  },
};

/** The signed envelope every delivery carries, per type. */
export function outboundEventBodies(): { type: OutboundEventType; summary: string; body: z.ZodType }[] {
  return (Object.keys(DATA) as OutboundEventType[]).map((type) => ({
    type,
    summary: DATA[type].summary,
    body: z.object({
      id: z
        .string()
        .describe('the event id; also the `webhook-id` header, the same on every retry and replay: dedupe on it'),
      type: z.literal(type),
      version: z.literal(OUTBOUND_EVENT_VERSION),
      timestamp: z.string().describe('when the event was recorded (ISO 8601)'),
      redacted: z
        .literal(true)
        .optional()
        .describe(
          'a retried delivery of an erased event recorded before its ids were in its proof form: its `hash` is as recorded (docs: event proofs, Erasure)',
        ),
      data: DATA[type].data,
    }),
  }));
}

const SIGNING =
  'Signed by the Standard Webhooks specification: `webhook-id`, `webhook-timestamp` (Unix seconds) and `webhook-signature` (`v1,<base64 HMAC-SHA256 of id.timestamp.body>` under the endpoint secret; during a rotation overlap two, space-separated). Verify with any Standard Webhooks library. Answer 2xx within 10 s; anything else is retried with exponential back-off for about three days, in order per subscriber. Redirects are not followed.';

/** How a receiver authenticates our deliveries, as an OpenAPI security scheme (the signature header). */
export const OUTBOUND_SIGNATURE_SCHEME = {
  webhookSignature: {
    type: 'apiKey',
    in: 'header',
    name: 'webhook-signature',
    description: 'Standard Webhooks signature under the endpoint secret (see each webhook)',
  },
};

/** OpenAPI 3.1 `webhooks`: one entry per event type, with the signing headers. */
export function outboundWebhooksDoc(schemaOf: (s: z.ZodType) => Record<string, unknown>): Record<string, unknown> {
  const header = (name: string, description: string) => ({
    name,
    in: 'header',
    required: true,
    schema: { type: 'string' },
    description,
  });
  return Object.fromEntries(
    outboundEventBodies().map(({ type, summary, body }) => [
      type,
      {
        post: {
          operationId: `outbound.${type}`,
          summary,
          description: SIGNING,
          security: [{ webhookSignature: [] }],
          parameters: [
            header('webhook-id', 'the event id (stable across retries and replays)'),
            header('webhook-timestamp', 'Unix seconds of this attempt'),
            header('webhook-signature', 'v1,<base64 signature>, space-separated when two secrets sign'),
          ],
          requestBody: { required: true, content: { 'application/json': { schema: schemaOf(body) } } },
          responses: { 200: { description: 'Any 2xx: delivered' } },
        },
      },
    ]),
  );
}
