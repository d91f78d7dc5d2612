import { z } from 'zod';
import { outboundDeliveryPage } from '../../db/outbound-events';
import { OUTBOUND_DELIVERY_STATUSES } from '../../domain/outbound-events';
import { uuidFilter, delivery, deliveryRow } from '../outbound-events/schema';
import { pageOf, paging } from '../schemas';
import { defineOperation } from '../types';

export const listOutboundDeliveries = defineOperation({
  name: 'outbound_deliveries.list',
  summary: 'The delivery log: one row per event and endpoint, its status, attempts and last answer',
  scope: 'webhooks:read',
  write: false,
  input: z
    .object({
      ...paging,
      event_id: uuidFilter('event_id').optional(),
      endpoint_id: uuidFilter('endpoint_id').optional(),
      status: z.enum(OUTBOUND_DELIVERY_STATUSES).optional(),
    })
    .strict(),
  output: pageOf(deliveryRow),
  rest: { method: 'GET', path: '/outbound-deliveries' },
  tool: {
    name: 'billing_webhook_deliveries',
    title: 'Outbound Deliveries',
    description: 'The outbound delivery log (filters: event_id, endpoint_id, status; paged).',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  async handler(ctx, input) {
    const page = await ctx.read((reader) =>
      outboundDeliveryPage(
        reader,
        { event_id: input.event_id, endpoint_id: input.endpoint_id, status: input.status },
        input,
      ),
    );
    return { ...page, data: page.data.map(delivery) };
  },
});
