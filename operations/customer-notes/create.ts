import { z } from 'zod';
import type { Row } from '../../db/row';
import { insertNote } from '../../db/customer-notes';
import { actorRef } from '../actor';
import { ApiError } from '../errors';
import { isoReq } from '../paging';
import { id, timestamp } from '../schemas';
import { defineOperation } from '../types';
import { appUserId } from '../customers/schema';

/** How many notes one app user may have: the customer page stays readable and a loop cannot fill the table. */
export const NOTES_PER_CUSTOMER = 500;

export const customerNote = z.object({
  object: z.literal('customer_note'),
  id: id(),
  app_user_id: z.string(),
  body: z.string(),
  written_by: z.string().describe('the key id, `user:<id>` for a person, or `operator`'),
  created_at: timestamp,
});

export const serializeNote = (r: Row): z.infer<typeof customerNote> => ({
  object: 'customer_note',
  id: r.id,
  app_user_id: r.app_user_id,
  body: r.body,
  written_by: r.written_by,
  created_at: isoReq(r.created_at),
});

/**
 * A note on an app user for the support desk (docs/support.md, "Notes"): what was asked, what was
 * done. Notes change nobody's access; an app user with only notes still has a customer page.
 */
export const createCustomerNote = defineOperation({
  name: 'customer_notes.create',
  summary: 'Write a note on an app user for the support desk (changes no access)',
  scope: 'customers:write',
  write: true,
  input: z
    .object({
      app_user_id: appUserId,
      body: z.string().trim().min(1).max(2000).describe('the note, 1–2000 characters'),
    })
    .strict(),
  output: customerNote,
  rest: { method: 'POST', path: '/customers/{app_user_id}/notes' },
  fuzzModelled: false,
  errors: [409],
  responses: { 201: { description: 'Created: the note', schema: customerNote } },
  tool: {
    name: 'billing_add_customer_note',
    title: 'Add Customer Note',
    description: 'Write a note (1–2000 characters) on an app user for the support desk; it changes no access.',
    // Each call adds another note.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  },
  async handler(ctx, input) {
    const row = await ctx.tx((trx) =>
      insertNote(
        trx,
        { tenantId: ctx.tenantId, appUserId: input.app_user_id, body: input.body, writtenBy: actorRef(ctx.actor) },
        NOTES_PER_CUSTOMER,
      ),
    );
    if (!row)
      throw new ApiError(
        409,
        'limit_reached',
        `This app user already has ${NOTES_PER_CUSTOMER} notes, the most one customer may have.`,
      );
    ctx.response.status = 201;
    return serializeNote(row);
  },
});
