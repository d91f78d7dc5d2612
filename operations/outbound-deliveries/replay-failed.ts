import { z } from 'zod';
import { replayFailedSince } from '../../db/outbound-events';
import { REPLAY_BATCH, REPLAY_PENDING_CAP } from '../../domain/outbound-limits';
import { uuidFilter, withinReplayQuota } from '../outbound-events/schema';
import { defineOperation } from '../types';

export const replayFailedDeliveries = defineOperation({
  name: 'outbound_deliveries.replay_failed',
  summary: `Deliver again every delivery that failed since a time (optionally of one endpoint), ${REPLAY_BATCH} per call and no more than brings the tenant's waiting deliveries to ${REPLAY_PENDING_CAP} (at it: 429 replay_quota_exceeded); has_more says to call again`,
  scope: 'webhooks:write',
  write: true,
  input: z
    .object({
      since: z.iso.datetime({ offset: true }).describe('ISO 8601 time: deliveries that failed at or after it'),
      endpoint_id: uuidFilter('endpoint_id').optional(),
    })
    .strict(),
  output: z.object({ object: z.literal('replay'), queued: z.number().int(), has_more: z.boolean() }),
  rest: { method: 'POST', path: '/outbound-deliveries/replay' },
  pages: [{ page: '/webhook-deliveries', gates: ['act'] }],
  tool: {
    name: 'billing_replay_failed_webhooks',
    title: 'Replay Failed Webhooks',
    description:
      'Deliver again every delivery that failed since a time (ISO 8601), optionally of one endpoint_id; has_more: call again.',
    // As above: queued for the worker, which POSTs to the tenant's own endpoints.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  },
  async handler(ctx, input) {
    const r = await withinReplayQuota(() =>
      ctx.tx((trx) => replayFailedSince(trx, ctx.tenantId, input.since, input.endpoint_id)),
    );
    return { object: 'replay' as const, ...r };
  },
});
