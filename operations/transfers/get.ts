import { getTransfer } from '../../db/transfers';
import { isUuid } from '../../domain/ids';
import { notFound } from '../errors';
import { defineOperation } from '../types';
import { renderTransfer, transferIdInput, transferRow } from './schema';

export const getTransferOp = defineOperation({
  name: 'transfers.get',
  summary: 'One transfer of a purchase between app users: its status, both app users and its undo window',
  scope: 'transfers:read',
  write: false,
  input: transferIdInput,
  output: transferRow,
  rest: { method: 'GET', path: '/transfers/{id}' },
  fuzzModelled: false,
  errors: [404],
  tool: {
    name: 'billing_transfer',
    title: 'Transfer',
    description: 'One transfer by id: status, from_app_user_id, to_app_user_id, provider, created_at, undo_until.',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  async handler(ctx, input) {
    const row = isUuid(input.id) ? await ctx.read((reader) => getTransfer(reader, input.id)) : undefined;
    if (!row) throw notFound('transfer');
    return renderTransfer(row);
  },
});
