import { z } from 'zod';
import { notePage } from '../../db/customer-notes';
import { customerExists } from '../../db/customers';
import { notFound } from '../errors';
import { pageOf, paging } from '../schemas';
import { defineOperation } from '../types';
import { appUserId } from '../customers/schema';
import { customerNote, serializeNote } from './create';

/** The support desk's notes on a known app user (docs/support.md, "Notes"). */
export const listCustomerNotes = defineOperation({
  name: 'customer_notes.list',
  summary: 'The support desk’s notes on an app user, newest first',
  scope: 'customers:read',
  write: false,
  input: z.object({ app_user_id: appUserId, ...paging }).strict(),
  output: pageOf(customerNote),
  rest: { method: 'GET', path: '/customers/{app_user_id}/notes' },
  fuzzModelled: false,
  tool: {
    name: 'billing_customer_notes',
    title: 'Customer Notes',
    description: 'The support desk’s notes on an app user, newest first (paged).',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  errors: [404],
  async handler(ctx, input) {
    // An app user unknown here is 404, as on the customer page (notes alone make one known).
    const page = await ctx.read(async (reader) => {
      if (!(await customerExists(reader, input.app_user_id))) throw notFound('customer');
      return notePage(reader, input.app_user_id, input);
    });
    return { ...page, data: page.data.map(serializeNote) };
  },
});
