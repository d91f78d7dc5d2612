import { z } from 'zod';
import { saveTransferSettings } from '../../db/transfers';
import { RESTORE_BEHAVIORS, UNDO_HOURS } from '../../domain/transfers';
import { defineOperation } from '../types';
import { renderTransferSettings, transferSettingsBody } from '../transfers/schema';

export const updateTransferSettings = defineOperation({
  name: 'transfer_settings.update',
  summary: 'Choose what a restore of a purchase another app user holds does, and how long a transfer can be undone',
  scope: 'transfers:write',
  write: true,
  input: z
    .object({
      restore_behavior: z
        .enum(RESTORE_BEHAVIORS)
        .optional()
        .describe('keep_with_original (the default), transfer, or review'),
      undo_hours: z
        .number()
        .min(UNDO_HOURS.min)
        .max(UNDO_HOURS.max)
        .optional()
        .describe(
          `hours a completed transfer can be undone: ${UNDO_HOURS.min}–${UNDO_HOURS.max}, default ${UNDO_HOURS.default}`,
        ),
    })
    .strict(),
  output: transferSettingsBody,
  rest: { method: 'PATCH', path: '/settings/transfers' },
  fuzzModelled: false,
  pages: [{ page: '/settings/transfers', gates: ['act'] }],
  tool: {
    name: 'billing_transfer_settings_update',
    title: 'Transfer Settings Update',
    description:
      'Set restore_behavior (keep_with_original, transfer, review) and/or undo_hours (0–720). Applies to restores from now on.',
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  async handler(ctx, input) {
    return renderTransferSettings(await ctx.tx((trx) => saveTransferSettings(trx, ctx.tenantId, input)));
  },
});
