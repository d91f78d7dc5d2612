import { z } from 'zod';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { isStoreProvider } from '../../domain/providers';
import { providerSetups, targetsOf } from '../../db/sync-facts';
import { runRetirement } from '../../temporal/workflow-starts';
import { ApiError, serverMisconfigured } from '../errors';
import { defineOperation } from '../types';
import { resolveProductRef } from './ref';

export const retireProduct = defineOperation({
  name: 'products.retire',
  summary: 'Stop sales at the live stores, then deactivate the product; a store refusal leaves it active',
  scope: 'products:write',
  write: true,
  input: z.object({ product_id: z.string().optional(), sku: z.string().optional() }).strict(),
  output: z.object({
    product_id: z.string(),
    retired: z.boolean(),
    stopped_at: z.array(z.string()),
    refused: z.array(z.object({ provider: z.string(), reason: z.string() })),
    detail: z.string(),
  }),
  tool: {
    name: 'billing_retire_product',
    title: 'Retire Product',
    description:
      'Retire a product: stops sales at the live stores first, then deactivates it. If a store refuses, the product stays active and the result says why.',
    // Stops sales at each live store (a workflow calls the stores) before deactivating here.
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
  },
  async handler(ctx, input) {
    if (!ctx.services.temporal) throw serverMisconfigured('TEMPORAL_ADDRESS');
    const { productId, stores } = await ctx.tx(async (trx) => ({
      productId: await resolveProductRef(trx, input),
      stores: targetsOf(await providerSetups(trx)).filter((t) => isStoreProvider(t.provider) && t.mode === 'live'),
    }));
    try {
      const r = await runRetirement(ctx.services.temporal.client, ctx.services.config.taskQueue, {
        tenantId: ctx.tenantId,
        productId,
        stores,
      });
      const detail = r.retired
        ? `Sales stopped at ${r.stopped_at.join(', ') || 'no store (it was on none)'}; the product is deactivated.`
        : `Still active: ${r.refused.map((x) => `${x.provider} refused (${x.reason})`).join('; ')}. Fix that at the store and retire again.`;
      return { product_id: productId, ...r, detail };
    } catch (e) {
      if (e instanceof WorkflowExecutionAlreadyStartedError)
        throw new ApiError(409, 'retire_in_progress', 'This product is being retired already.');
      throw e;
    }
  },
});
