import { defineOperation } from '../types';
import { decide } from './decide';
import { transferIdInput, transferRow } from './schema';

export const rejectTransfer = defineOperation({
  name: 'transfers.reject',
  summary: 'Reject a pending transfer: the app user who holds the purchase keeps it',
  scope: 'transfers:write',
  write: true,
  input: transferIdInput,
  output: transferRow,
  rest: { method: 'POST', path: '/transfers/{id}/reject', noBody: true },
  fuzzModelled: false,
  errors: [404, 409, 500],
  tool: {
    name: 'billing_reject_transfer',
    title: 'Reject Transfer',
    description: 'Reject a pending transfer (id): nothing moves; the holder keeps access.',
    // Moves access between app users in this service only; a second call is refused (409), it changes nothing more.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  async handler(ctx, input) {
    return decide(ctx, input.id, 'reject');
  },
});
