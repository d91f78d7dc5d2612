import { z } from 'zod';
import { deleteEndpoint } from '../../db/outbound-endpoints';
import { notFound } from '../errors';
import { id } from '../schemas';
import { defineOperation } from '../types';
import { idParam, known } from './schema';

export const deleteEndpointOp = defineOperation({
  name: 'webhook_endpoints.delete',
  summary: 'Remove an endpoint with its deliveries and their log; queued deliveries to it are dropped',
  scope: 'webhooks:write',
  write: true,
  input: idParam.strict(),
  output: z.object({ id: id(), object: z.literal('webhook_endpoint'), deleted: z.literal(true) }),
  rest: { method: 'DELETE', path: '/webhook-endpoints/{id}', noBody: true },
  errors: [404],
  tool: {
    name: 'billing_delete_webhook_endpoint',
    title: 'Delete Webhook Endpoint',
    description: 'Remove an endpoint with its delivery log.',
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  },
  async handler(ctx, input) {
    if (!(await ctx.tx((trx) => deleteEndpoint(trx, known(input.id))))) throw notFound('webhook endpoint');
    return { id: input.id, object: 'webhook_endpoint' as const, deleted: true as const };
  },
});
