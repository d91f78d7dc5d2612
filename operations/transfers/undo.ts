import { defineOperation } from '../types';
import { decide } from './decide';
import { transferIdInput, transferRow } from './schema';

export const undoTransfer = defineOperation({
  name: 'transfers.undo',
  summary: 'Undo a completed transfer within its window: both app users get back exactly what they had',
  scope: 'transfers:write',
  write: true,
  input: transferIdInput,
  output: transferRow,
  rest: { method: 'POST', path: '/transfers/{id}/undo', noBody: true },
  fuzzModelled: false,
  errors: [404, 409, 500],
  tool: {
    name: 'billing_undo_transfer',
    title: 'Undo Transfer',
    description:
      'Undo a completed transfer (id) before undo_until: the purchase, its access and the receiver’s replaced rows go back; 409 past the window.',
    // Moves access between app users in this service only; a second call is refused (409), it changes nothing more.
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  },
  async handler(ctx, input) {
    return decide(ctx, input.id, 'undo');
  },
});
