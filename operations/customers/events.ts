import { z } from 'zod';
import { mergedInto } from '../../db/customer-merges';
import { customerEventsAfter, customerExists } from '../../db/customers';
import { notFound } from '../errors';
import { documentedAs, pageOf, paging } from '../schemas';
import { defineOperation } from '../types';
import { appUserId } from './schema';

const after = z
  .union([z.number(), z.string()])
  .optional()
  .transform((v, ctx) => {
    if (v === undefined) return 0;
    const n = typeof v === 'number' ? v : /^\d+$/.test(v.trim()) ? Number(v) : NaN;
    if (!Number.isSafeInteger(n) || n < 0) {
      ctx.addIssue({ code: 'custom', message: 'after must be a sequence number (an integer ≥ 0)' });
      return z.NEVER;
    }
    return n;
  })
  .describe('the highest `sequence` you hold: the answer starts at the one after it (default 0: from the first)');
documentedAs.add(after, {
  type: 'integer',
  minimum: 0,
  default: 0,
  description: 'the highest `sequence` you hold: the answer starts at the one after it (default 0: from the first)',
});

/**
 * Re-fetch what was missed (docs/event-proofs.md): every recorded event about the app user after
 * a sequence number, oldest first, each body exactly as it was (or would have been) delivered, its
 * `prev_hash` and `hash` linking it to the one before. A receiver that sees a gap in `sequence`
 * asks for what follows the last one it holds.
 */
export const customerEvents = defineOperation({
  name: 'customers.events',
  summary: 'One app user’s events after a sequence number, in sequence order, each body exactly as delivered',
  scope: 'customers:read',
  write: false,
  input: z.object({ app_user_id: appUserId, after, ...paging }).strict(),
  output: pageOf(
    z
      .object({
        id: z.string(),
        type: z.string(),
        version: z.number().int(),
        timestamp: z.string(),
        redacted: z
          .literal(true)
          .optional()
          .describe(
            'erased, and recorded before its ids were in its proof form: its `hash` is as recorded, checked by the next `prev_hash` and the daily digest',
          ),
        data: z.record(z.string(), z.unknown()),
      })
      .describe('the event body as delivered (OpenAPI `webhooks` documents each type)'),
  ).extend({
    merged_into: z
      .object({
        app_user_id: z.string().describe('the customer this id was merged into: its events continue there'),
        sequence: z
          .number()
          .int()
          .nullable()
          .describe(
            'the `sequence` of the `customer.merged` event there that ended this id’s events: once you hold every event of this id (`has_more` false), continue with that customer’s events after `sequence - 1`; null: merged before merges were events, continue from its first',
          ),
      })
      .nullable()
      .describe('null: this id is no other customer’s; its events are all here'),
  }),
  rest: { method: 'GET', path: '/customers/{app_user_id}/events' },
  fuzzModelled: false,
  errors: [404],
  tool: {
    name: 'billing_customer_events',
    title: 'Customer events',
    description:
      'One app user’s events after a sequence number (after=N), oldest first, each exactly as delivered to webhook endpoints, with the hash chain that proves none is missing. An id merged into another customer answers its own events up to the merge and `merged_into`: read that customer’s events after `merged_into.sequence - 1` to go on (the first is the `customer.merged` event).',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  async handler(ctx, input) {
    return ctx.read(async (reader) => {
      const { bodies, total } = await customerEventsAfter(reader, ctx.tenantId, input.app_user_id, input.after, input);
      if (total === 0 && !(await customerExists(reader, input.app_user_id))) throw notFound('customer');
      return {
        merged_into: await mergedInto(reader, input.app_user_id),
        data: bodies as Array<{
          id: string;
          type: string;
          version: number;
          timestamp: string;
          data: Record<string, unknown>;
        }>,
        pagination: {
          limit: input.limit,
          offset: input.offset,
          total,
          has_more: input.offset + bodies.length < total,
        },
      };
    });
  },
});
