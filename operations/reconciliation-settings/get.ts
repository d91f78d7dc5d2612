import { z } from 'zod';
import { reconciliationSettings } from '../../db/reconciliation-settings';
import { defineOperation } from '../types';
import { renderSettings, settingsBody } from '../reconciliations/schema';

export const getReconciliationSettings = defineOperation({
  name: 'reconciliation_settings.get',
  summary: 'How often the provider state is compared with what the service holds, for web providers and stores',
  scope: 'imports:read',
  write: false,
  input: z.object({}).strict(),
  output: settingsBody,
  rest: { method: 'GET', path: '/reconciliation/settings' },
  fuzzModelled: false,
  tool: {
    name: 'billing_reconciliation_settings',
    title: 'Reconciliation Settings',
    description:
      'How often the scheduled reconciliation compares provider state with what is held: enabled, web_interval_minutes (psp_a, psp_b, psp_c; default 60), stores_interval_minutes (stores; default 1440).',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  async handler(ctx) {
    return renderSettings(await ctx.tx((trx) => reconciliationSettings(trx)));
  },
});
