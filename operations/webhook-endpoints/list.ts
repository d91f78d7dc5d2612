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
  pages: [{ page: '/webhook-endpoints', gates: ['open'] }],
  tool: {
    name: 'billing_webhook_endpoints',
    title: 'Webhook Endpoints',
    description:
      'Where this tenant’s events are pushed: URL, event types, enabled and why not. Secrets are never listed.',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  async handler(ctx, input) {
    const page = await ctx.read((reader) => endpointPage(reader, input));
    return { ...page, data: page.data.map(endpoint) };
  },
});
