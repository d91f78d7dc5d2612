import crypto from 'node:crypto';
import { z } from 'zod';
import { listConnectionsSafe } from '../../db/connections';
import { customerKnown } from '../../db/reconciliations';
import { PROVIDERS } from '../../domain/providers';
import { runCustomerRefresh } from '../../temporal/workflow-starts';
import { notFound, serverMisconfigured } from '../errors';
import { defineOperation } from '../types';
import { refreshBody } from '../reconciliations/schema';

export const refreshCustomer = defineOperation({
  name: 'customers.refresh',
  summary: 'Re-read every provider for one customer and apply what differs from what the service holds (for support)',
  scope: 'imports:write',
  write: true,
  input: z
    .object({ app_user_id: z.string().min(1).max(200).describe('the customer, by the app user id the app gave') })
    .strict(),
  output: refreshBody,
  rest: { method: 'POST', path: '/customers/{app_user_id}/refresh' },
  fuzzModelled: false,
  errors: [404, 503],
  tool: {
    name: 'billing_customer_refresh',
    title: 'Customer Refresh',
    description:
      'Re-read every provider for one customer (app_user_id) and apply what differs from what is held: answers what differed and what was applied (empty repairs: nothing differed). For support, when a purchase did not unlock.',
    // Reads the providers; writes subscriptions and entitlements here only; a second refresh changes nothing.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  },
  async handler(ctx, input) {
    if (!ctx.services.temporal) throw serverMisconfigured('TEMPORAL_ADDRESS');
    const { providers, known } = await ctx.tx(async (trx) => {
      const proven = (await listConnectionsSafe(trx)).filter((c) => c.is_active && c.verified_at);
      return {
        providers: PROVIDERS.filter((p) => proven.some((c) => c.provider === p)),
        known: await customerKnown(trx, input.app_user_id),
      };
    });
    const runId = crypto.randomUUID();
    const outcome = await runCustomerRefresh(ctx.services.temporal.client, ctx.services.config.taskQueue, {
      tenantId: ctx.tenantId,
      runId,
      appUserId: input.app_user_id,
    });
    // Neither held by this tenant nor named by any of its providers: no such customer here.
    if (!known && outcome.compared === 0) throw notFound('customer');
    return {
      object: 'customer_refresh' as const,
      app_user_id: input.app_user_id,
      run_id: runId,
      providers,
      compared: outcome.compared,
      repairs: outcome.repairs.map((r) => ({
        ...r,
        object: 'reconciliation' as const,
        run_id: runId,
        app_user_id: input.app_user_id,
      })),
      skipped: outcome.skipped,
    };
  },
});
