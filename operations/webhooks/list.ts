import { z } from 'zod';
import { iso } from '../paging';
import type { Row } from '../../db/row';
import { deliveryPage } from '../../db/webhook-deliveries';
import { WEBHOOK_DELIVERY_STATUSES } from '../../domain/events';
import { isoReq } from '../paging';
import { filter, id, mode, pageOf, paging, provider, timestamp, timestampOrNull } from '../schemas';
import { defineOperation } from '../types';

export const webhookRow = z.object({
  id: id(),
  object: z.literal('webhook_delivery'),
  provider,
  event_id: z.string(),
  event_type: z.string(),
  mode: mode.nullable(),
  status: z.enum(WEBHOOK_DELIVERY_STATUSES),
  reason: z.string().nullable(),
  delivery_count: z.number().int(),
  payload: z.unknown().describe('the provider payload, redacted'),
  processed_at: timestampOrNull,
  created_at: timestamp,
});

export function serializeWebhookDelivery(r: Row) {
  return {
    id: r.id,
    object: 'webhook_delivery' as const,
    provider: r.provider,
    event_id: r.event_id,
    event_type: r.event_type,
    mode: r.mode ?? null,
    status: r.status,
    reason: r.reason ?? null,
    delivery_count: r.delivery_count,
    payload: r.payload,
    processed_at: iso(r.processed_at),
    created_at: isoReq(r.created_at),
  };
}

export const listWebhooks = defineOperation({
  name: 'webhooks.list',
  summary:
    'Inbound provider webhook deliveries (payloads stored redacted); status=failed lists dropped ones with the reason',
  scope: 'webhooks:read',
  write: false,
  input: z
    .object({
      ...paging,
      provider: provider.optional(),
      status: z.enum(WEBHOOK_DELIVERY_STATUSES).optional(),
      event_type: filter.optional(),
      mode: mode.optional(),
    })
    .strict(),
  output: pageOf(webhookRow),
  rest: { method: 'GET', path: '/webhooks' },
  pages: [{ page: '/webhook-deliveries', gates: ['open'] }],
  tool: {
    name: 'billing_webhooks',
    title: 'Webhooks',
    description: 'Inbound webhook deliveries (filters: provider, status, event_type, mode; paged).',
    // Deliveries already received and stored; no provider is asked.
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  async handler(ctx, input) {
    return ctx.read(async (reader) => {
      const page = await deliveryPage(
        reader,
        { provider: input.provider, status: input.status, event_type: input.event_type, mode: input.mode },
        input,
      );
      return { ...page, data: page.data.map(serializeWebhookDelivery) };
    });
  },
});
