import { z } from 'zod';
import { endpointPage } from '../../db/outbound-endpoints';
import { pageOf, paging } from '../schemas';
import { defineOperation } from '../types';
import { endpoint, endpointRow } from './schema';

export const listEndpoints = defineOperation({
  name: 'webhook_endpoints.list',
  summary:
    'Outbound webhook endpoints: where entitlement, subscription, sync and readiness events are pushed (signing secrets are never listed)',
  scope: 'webhooks:read',
  write: false,
  input: z.object({ ...paging }).strict(),
  output: pageOf(endpointRow),
  rest: { method: 'GET', path: '/webhook-endpoints' },
  async handler(ctx, input) {
    const page = await ctx.read((reader) => endpointPage(reader, input));
    return { ...page, data: page.data.map(endpoint) };
  },
});
