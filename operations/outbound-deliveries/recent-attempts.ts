import { z } from 'zod';
import { UUID_RE } from '../../domain/ids';
import { attemptsOf } from '../../db/outbound-events';
import { attemptRow } from '../outbound-events/schema';
import { defineOperation } from '../types';
import { attempt } from './attempts';

/**
 * The last 20 attempts of each of up to 50 deliveries, newest first, in one read: the delivery log
 * of an endpoint's page in the dashboard. No REST route and no tool: the API reads one delivery's
 * attempts, paged (`GET /v1/outbound-deliveries/{id}/attempts`). Ids of no delivery of the
 * tenant's simply have no attempts.
 */
export const recentOutboundAttempts = defineOperation({
  name: 'outbound_deliveries.recent_attempts',
  summary: 'The last 20 attempts of each of up to 50 deliveries (the dashboard’s delivery log)',
  scope: 'webhooks:read',
  write: false,
  input: z.object({ delivery_ids: z.array(z.string().regex(UUID_RE)).max(50) }).strict(),
  output: z.object({ data: z.array(attemptRow) }),
  async handler(ctx, input) {
    const rows = await ctx.tx((trx) => attemptsOf(trx, input.delivery_ids));
    return { data: rows.map(attempt) };
  },
});
