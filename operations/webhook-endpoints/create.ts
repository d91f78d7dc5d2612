import { z } from 'zod';
import { insertEndpoint, lockedEndpointCount } from '../../db/outbound-endpoints';
import { baseReadiness } from '../../db/outbound-events';
import { MAX_ENDPOINTS_PER_TENANT } from '../../domain/outbound-limits';
import { ApiError } from '../errors';
import { defineOperation } from '../types';
import { checkUrl, description, endpoint, eventTypes, url, withSecret } from './schema';

export const createEndpoint = defineOperation({
  name: 'webhook_endpoints.create',
  summary: `Add an outbound webhook endpoint (at most ${MAX_ENDPOINTS_PER_TENANT} per tenant: 409 endpoint_limit_reached); the answer carries its signing secret, shown this once`,
  scope: 'webhooks:write',
  write: true,
  input: z.object({ url, event_types: eventTypes.optional(), description: description.optional() }).strict(),
  output: withSecret,
  rest: { method: 'POST', path: '/webhook-endpoints' },
  errors: [409],
  pages: [{ page: '/webhook-endpoints', gates: ['act'] }],
  tool: {
    name: 'billing_create_webhook_endpoint',
    title: 'Create Webhook Endpoint',
    description:
      'Add an endpoint (url, optional event_types; empty: all). The answer holds its signing secret once: hand it to the person to store, do not repeat it elsewhere.',
    // Saved here; deliveries to it start with the next event, from the worker.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  },
  async handler(ctx, input) {
    checkUrl(ctx, input.url);
    const { vault } = ctx.services;
    const { row, secret } = await ctx.tx(async (trx) => {
      if ((await lockedEndpointCount(trx, ctx.tenantId)) >= MAX_ENDPOINTS_PER_TENANT) {
        throw new ApiError(
          409,
          'endpoint_limit_reached',
          `A tenant may have at most ${MAX_ENDPOINTS_PER_TENANT} webhook endpoints; delete one it no longer uses (an endpoint receives every event type unless event_types narrows it).`,
          { param: 'url', limit: MAX_ENDPOINTS_PER_TENANT },
        );
      }
      const made = await insertEndpoint(trx, vault, {
        tenantId: ctx.tenantId,
        url: input.url,
        description: input.description ?? null,
        eventTypes: input.event_types ?? [],
        taskQueue: ctx.services.config.taskQueue,
      });
      // readiness.changed is told against what readiness is now.
      await baseReadiness(trx, ctx.tenantId);
      return made;
    });
    return { ...endpoint(row), secret };
  },
});
