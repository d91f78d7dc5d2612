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
  async handler(ctx) {
    return renderSettings(await ctx.tx((trx) => reconciliationSettings(trx)));
  },
});
