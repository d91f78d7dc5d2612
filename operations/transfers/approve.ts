import { defineOperation } from '../types';
import { decide } from './decide';
import { transferIdInput, transferRow } from './schema';

export const approveTransfer = defineOperation({
  name: 'transfers.approve',
  summary:
    'Approve a pending transfer: access moves to the app user who restored the purchase, and the undo window starts',
  scope: 'transfers:write',
  write: true,
  input: transferIdInput,
  output: transferRow,
  rest: { method: 'POST', path: '/transfers/{id}/approve', noBody: true },
  fuzzModelled: false,
  errors: [404, 409, 500],
  // The customer view's transfer buttons (approve, reject, undo: one scope) post under this page.
  pages: [{ page: '/customers/transfers', gates: ['act'] }],
  tool: {
    name: 'billing_approve_transfer',
    title: 'Approve Transfer',
    description:
      'Approve a pending transfer (id): the purchase and its access move to to_app_user_id now; undoable until undo_until.',
    // Moves access between app users in this service only; a second call is refused (409), it changes nothing more.
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  },
  async handler(ctx, input) {
    return decide(ctx, input.id, 'approve');
  },
});
