import { z } from 'zod';
import { attemptPage, deliveryExists } from '../../db/outbound-events';
import type { Row } from '../../db/row';
import { isUuid } from '../../domain/ids';
import { notFound } from '../errors';
import { attemptRow } from '../outbound-events/schema';
import { isoReq } from '../paging';
import { id, pageOf, paging } from '../schemas';
import { defineOperation } from '../types';

/** An attempt row as the API shows it. */
export const attempt = (r: Row) => ({
  id: r.id as string,
  object: 'outbound_attempt' as const,
  delivery_id: r.delivery_id as string,
  attempt: r.attempt as number,
  status_code: (r.status_code ?? null) as number | null,
  latency_ms: r.latency_ms as number,
  response_excerpt: (r.response_excerpt ?? null) as string | null,
  error: (r.error ?? null) as string | null,
  created_at: isoReq(r.created_at as Date | string),
});

export const listOutboundAttempts = defineOperation({
  name: 'outbound_deliveries.attempts',
  summary: 'Every HTTP attempt of one delivery: status code, latency and the first KiB of the answer',
  scope: 'webhooks:read',
  write: false,
  input: z.object({ ...paging, id: id('delivery id (uuid)') }).strict(),
  output: pageOf(attemptRow),
  rest: { method: 'GET', path: '/outbound-deliveries/{id}/attempts' },
  errors: [404],
  async handler(ctx, input) {
    if (!isUuid(input.id)) throw notFound('delivery');
    return ctx.tx(async (trx) => {
      if (!(await deliveryExists(trx, input.id))) throw notFound('delivery');
      const page = await attemptPage(trx, { delivery_id: input.id }, input);
      return {
        ...page,
        data: page.data.map(attempt),
      };
    });
  },
});
