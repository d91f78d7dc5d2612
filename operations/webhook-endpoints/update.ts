import { z } from 'zod';
import { endpointById, updateEndpoint } from '../../db/outbound-endpoints';
import { notFound } from '../errors';
import { defineOperation } from '../types';
import { checkUrl, description, endpoint, endpointRow, eventTypes, idParam, known, url } from './schema';

export const updateEndpointOp = defineOperation({
  name: 'webhook_endpoints.update',
  summary:
    'Change an endpoint: its URL, event types, description, or enabled (disabling stops its deliveries; enabling clears the reason)',
  scope: 'webhooks:write',
  write: true,
  input: idParam
    .extend({
      url: url.optional(),
      event_types: eventTypes.optional(),
      description: description.optional(),
      enabled: z.boolean().optional(),
    })
    .strict(),
  output: endpointRow,
  rest: { method: 'PATCH', path: '/webhook-endpoints/{id}' },
  errors: [404],
  tool: {
    name: 'billing_update_webhook_endpoint',
    title: 'Update Webhook Endpoint',
    description:
      'Change an endpoint’s url, event_types, description or enabled. Disabling stops its deliveries; enabling clears the reason.',
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  async handler(ctx, input) {
    const row = await ctx.tx(async (trx) => {
      // An unknown endpoint is a 404 whatever the body says; a bad URL for a known one is a 400.
      if (!(await endpointById(trx, known(input.id)))) throw notFound('webhook endpoint');
      if (input.url !== undefined) checkUrl(ctx, input.url);
      return updateEndpoint(trx, input.id, {
        url: input.url,
        description: input.description,
        eventTypes: input.event_types,
        enabled: input.enabled,
      });
    });
    if (!row) throw notFound('webhook endpoint');
    return endpoint(row);
  },
});
