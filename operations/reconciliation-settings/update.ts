import { z } from 'zod';
import { saveReconciliationSettings } from '../../db/reconciliation-settings';
import { INTERVALS } from '../../domain/reconciliation-schedule';
import { ensureTenantReconciliationSchedules } from '../../temporal/reconciliation-schedules';
import { serverMisconfigured } from '../errors';
import { defineOperation } from '../types';
import { renderSettings, settingsBody } from '../reconciliations/schema';

const minutes = (g: keyof typeof INTERVALS, what: string) =>
  z
    .number()
    .int()
    .min(INTERVALS[g].min)
    .max(INTERVALS[g].max)
    .optional()
    .describe(`${what}: ${INTERVALS[g].min}–${INTERVALS[g].max}, default ${INTERVALS[g].default}`);

export const updateReconciliationSettings = defineOperation({
  name: 'reconciliation_settings.update',
  summary:
    'Change how often the provider state is compared with what the service holds (minutes), or turn the scheduled runs off',
  scope: 'imports:write',
  write: true,
  input: z
    .object({
      enabled: z.boolean().optional().describe('false pauses the scheduled runs; true resumes them'),
      web_interval_minutes: minutes('web', 'minutes between runs over psp_a, psp_b and psp_c'),
      stores_interval_minutes: minutes('stores', 'minutes between runs over store_android and store_ios'),
    })
    .strict(),
  output: settingsBody,
  rest: { method: 'PATCH', path: '/reconciliation/settings' },
  fuzzModelled: false,
  tool: {
    name: 'billing_reconciliation_settings_update',
    title: 'Reconciliation Settings Update',
    description:
      'Change the scheduled reconciliation: web_interval_minutes (15–1440), stores_interval_minutes (60–10080), enabled (false pauses the runs). The schedules follow at once.',
    // Writes the setting and this service's own schedules; no provider is asked; the same body twice changes nothing.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  async handler(ctx, input) {
    // The schedules follow the settings: without Temporal nothing is written.
    if (!ctx.services.temporal) throw serverMisconfigured('TEMPORAL_ADDRESS');
    const saved = await ctx.tx((trx) => saveReconciliationSettings(trx, ctx.tenantId, input));
    // After the commit: the ensure reads the settings in a transaction of its own. Idempotent, and
    // every process start ensures again, so a schedule missed here is brought in line then.
    await ensureTenantReconciliationSchedules(
      ctx.services.temporal.client,
      ctx.services.config.taskQueue,
      ctx.services.db,
      ctx.tenantId,
    );
    return renderSettings(saved);
  },
});
