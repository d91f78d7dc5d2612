import { z } from 'zod';
import { eventPage } from '../../db/outbound-events';
import { isoReq } from '../paging';
import { pageOf, paging } from '../schemas';
import { defineOperation } from '../types';
import { eventType } from '../webhook-endpoints/schema';
import { eventRow } from './schema';

export const listOutboundEvents = defineOperation({
  name: 'outbound_events.list',
  summary: 'Events recorded for the tenant’s webhook endpoints, newest first, with the body each delivery carries',
  scope: 'webhooks:read',
  write: false,
  input: z.object({ ...paging, type: eventType.optional() }).strict(),
  output: pageOf(eventRow),
  rest: { method: 'GET', path: '/outbound-events' },
  async handler(ctx, input) {
    const page = await ctx.read((reader) => eventPage(reader, { type: input.type }, input));
    return {
      ...page,
      data: page.data.map((r) => ({
        id: r.id,
        object: 'outbound_event' as const,
        type: r.type,
        body: r.body,
        created_at: isoReq(r.created_at),
      })),
    };
  },
});
