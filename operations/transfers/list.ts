import { z } from 'zod';
import { transferPage } from '../../db/transfers';
import { filter, pageOf, paging } from '../schemas';
import { defineOperation } from '../types';
import { renderTransfer, transferRow } from './schema';

export const listTransfers = defineOperation({
  name: 'transfers.list',
  summary: 'Transfers of purchases between app users (restores), newest first; one app user’s given or received',
  scope: 'transfers:read',
  write: false,
  input: z
    .object({
      ...paging,
      app_user_id: filter.optional().describe('only transfers from or to this app user'),
    })
    .strict(),
  output: pageOf(transferRow),
  rest: { method: 'GET', path: '/transfers' },
  tool: {
    name: 'billing_transfers',
    title: 'Transfers',
    description:
      'Restores that moved (or asked to move) a purchase between app users: status pending, completed, rejected or undone (filter: app_user_id; paged).',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  async handler(ctx, input) {
    const page = await ctx.read((reader) => transferPage(reader, input.app_user_id, input));
    return { ...page, data: page.data.map(renderTransfer) };
  },
});
