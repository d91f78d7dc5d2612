import { endpointById } from '../../db/outbound-endpoints';
import { notFound } from '../errors';
import { defineOperation } from '../types';
import { endpoint, endpointRow, idParam, known } from './schema';

export const getEndpoint = defineOperation({
  name: 'webhook_endpoints.get',
  summary: 'One outbound webhook endpoint (enabled, and why not)',
  scope: 'webhooks:read',
  write: false,
  input: idParam.strict(),
  output: endpointRow,
  rest: { method: 'GET', path: '/webhook-endpoints/{id}' },
  errors: [404],
  async handler(ctx, input) {
    const row = await ctx.tx((trx) => endpointById(trx, known(input.id)));
    if (!row) throw notFound('webhook endpoint');
    return endpoint(row);
  },
});
