import { z } from 'zod';
import { replayEvent } from '../../db/outbound-events';
import { isUuid } from '../../domain/ids';
import { REPLAY_PENDING_CAP } from '../../domain/outbound-limits';
import { notFound } from '../errors';
import { id } from '../schemas';
import { defineOperation } from '../types';
import { uuidFilter, withinReplayQuota } from './schema';

export const replayOutboundEvent = defineOperation({
  name: 'outbound_events.replay',
  summary: `Deliver one event again, with the same webhook-id (receivers dedupe on it): to one endpoint, or to every endpoint it went to (429 replay_quota_exceeded while ${REPLAY_PENDING_CAP} of the tenant's deliveries wait)`,
  scope: 'webhooks:write',
  write: true,
  input: z.object({ id: id('event id (uuid)'), endpoint_id: uuidFilter('endpoint_id').optional() }).strict(),
  output: z.object({ id: id(), object: z.literal('replay'), queued: z.number().int() }),
  rest: { method: 'POST', path: '/outbound-events/{id}/replay' },
  errors: [404],
  tool: {
    name: 'billing_replay_webhook_event',
    title: 'Replay Webhook Event',
    description: 'Deliver one event again (same webhook-id), to one endpoint_id or to every endpoint it went to.',
    // Queues the delivery; the worker POSTs it later to the tenant's own endpoint, no provider or store.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  },
  async handler(ctx, input) {
    if (!isUuid(input.id)) throw notFound('event');
    const queued = await withinReplayQuota(() =>
      ctx.tx((trx) => replayEvent(trx, ctx.tenantId, input.id, input.endpoint_id)),
    );
    if (queued === undefined) throw notFound(input.endpoint_id ? 'event or endpoint' : 'event');
    return { id: input.id, object: 'replay' as const, queued };
  },
});
