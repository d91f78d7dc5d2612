import { z } from 'zod';
import { transferSettings } from '../../db/transfers';
import { defineOperation } from '../types';
import { renderTransferSettings, transferSettingsBody } from '../transfers/schema';

export const getTransferSettings = defineOperation({
  name: 'transfer_settings.get',
  summary:
    'What a restore of a purchase another app user holds does (restore_behavior) and how long a transfer can be undone',
  scope: 'transfers:read',
  write: false,
  input: z.object({}).strict(),
  output: transferSettingsBody,
  rest: { method: 'GET', path: '/settings/transfers' },
  fuzzModelled: false,
  pages: [{ page: '/settings/transfers', gates: ['open'] }],
  tool: {
    name: 'billing_transfer_settings',
    title: 'Transfer Settings',
    description:
      'The restore policy: restore_behavior (keep_with_original, transfer or review) for a purchase another app user holds, and undo_hours (0–720, default 72).',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  async handler(ctx) {
    return renderTransferSettings(await ctx.tx((trx) => transferSettings(trx)));
  },
});
