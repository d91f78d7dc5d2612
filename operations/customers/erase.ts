import { z } from 'zod';
import { customerExists } from '../../db/customers';
import { eraseCustomer } from '../../db/erasure';
import { actorRef } from '../actor';
import { notFound } from '../errors';
import { isoReq } from '../paging';
import { timestamp } from '../schemas';
import { defineOperation } from '../types';
import { appUserId } from './schema';

const counts = z.object({
  attributes: z.number().int().describe('subscriber attributes deleted'),
  aliases: z.number().int().describe('links to other app user ids deleted'),
  notes: z.number().int().describe('support notes deleted'),
  emails: z.number().int().describe('buyer emails emptied on subscriptions and received provider events'),
  event_bodies: z.number().int().describe('recorded events whose personal values were replaced by their SHA-256'),
});

export const customerErasure = z.object({
  object: z.literal('customer_erasure'),
  app_user_id: z.string().describe('the id asked for (kept nowhere: the records are under `erased_as`)'),
  erased_as: z
    .string()
    .describe('the pseudonym the customer’s billing records are kept under, in every table and export'),
  /** False: the id has no records left and was erased before: this answers that erasure. */
  erased: z.boolean(),
  erased_at: timestamp,
  erased_by: z.string().describe('the key id, `user:<id>` for a person, or `operator`'),
  removed: counts.describe('what the erasure removed, in all (counts only: no value is kept)'),
});

/**
 * Erases an app user's personal data (docs/support.md, "Erasure"; docs/event-proofs.md,
 * "Erasure"): their attributes, notes, aliases and buyer emails; the id itself, whose billing
 * records stay under a pseudonym; personal values in their recorded events replaced by their
 * SHA-256, so the chains and signed digests still check; the files of earlier exports. Asking again
 * answers the same erasure; records written under the id since are a new customer's, erased anew.
 */
export const eraseCustomerOp = defineOperation({
  name: 'customers.erase',
  summary: 'Erase an app user’s personal data and id; billing records stay under a pseudonym',
  scope: 'customers:erase',
  write: true,
  input: z.object({ app_user_id: appUserId }).strict(),
  output: customerErasure,
  rest: { method: 'POST', path: '/customers/{app_user_id}/erase' },
  fuzzModelled: false,
  errors: [404],
  // The customer page's erase form (its confirmation typed by the person).
  pages: [{ page: '/customers/erase', gates: ['act'] }],
  tool: {
    name: 'billing_erase_customer',
    title: 'Erase Customer',
    description:
      'Erase an app user’s personal data for good: attributes (such as $email), support notes, aliases, buyer emails and the app user id itself; personal values in their events become SHA-256 hashes. Subscriptions, entitlements and grants stay under a pseudonym (erased_as); the id is a new customer afterwards. Cannot be undone.',
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  },
  async handler(ctx, input) {
    const done = await ctx.tx(async (trx) => {
      // Known, or erased before (its records are under the pseudonym now: answered the same).
      const done = await eraseCustomer(trx, ctx.tenantId, input.app_user_id, actorRef(ctx.actor), (id) =>
        customerExists(trx, id),
      );
      if (!done) throw notFound('customer');
      return done;
    });
    return {
      object: 'customer_erasure' as const,
      app_user_id: input.app_user_id,
      erased_as: done.row.erased_as,
      erased: done.erased,
      erased_at: isoReq(done.row.erased_at),
      erased_by: done.row.erased_by,
      removed: done.row.removed,
    };
  },
});
