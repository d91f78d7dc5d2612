import crypto from 'node:crypto';
import { z } from 'zod';
import { productToSync } from '../../db/sync-facts';
import { isUuid } from '../../domain/ids';
import { actorRef } from '../actor';
import { notFound } from '../errors';
import { id, provider } from '../schemas';
import { launch, outcomeOf, verdict } from '../sync/launch';
import { defineOperation } from '../types';

const productSyncBody = z.object({
  product_id: id(),
  sku: z.string(),
  run_id: id('the sync run'),
  ok: z.boolean().describe('false when any provider failed or was skipped: inspect verdicts'),
  synced: z.number().int(),
  verdicts: z.array(verdict),
});

export const syncProduct = defineOperation({
  name: 'products.sync',
  summary:
    'Sync one product to its providers (optionally one provider); 200 with per-provider verdicts even when one failed',
  scope: 'products:sync',
  write: true,
  input: z
    .object({
      id: id('product id (uuid)'),
      provider: provider.optional().describe('only this provider'),
    })
    .strict(),
  output: productSyncBody,
  rest: { method: 'POST', path: '/products/{id}/sync', query: ['provider'], noBody: true },
  errors: [404, 409],
  tool: {
    name: 'billing_sync_product',
    title: 'Sync Product',
    description:
      'Sync one product to its providers (the only onboarding step that writes to a live provider). Read every verdict: a 200 can hold failures.',
    namesProduct: true,
    // Creates and updates the product's objects at every connected provider.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  },
  async handler(ctx, input) {
    const product = isUuid(input.id) ? await ctx.tx((trx) => productToSync(trx, input.id)) : undefined;
    if (!product) throw notFound('product');
    const runId = crypto.randomUUID();
    const handle = await launch(ctx, {
      tenantId: ctx.tenantId,
      runId,
      kind: 'product-sync',
      requestedBy: actorRef(ctx.actor),
      product,
      only: input.provider,
    });
    const r = await outcomeOf(handle);
    return {
      product_id: product.productId,
      sku: product.sku,
      run_id: runId,
      ok: r.ok && r.skipped.length === 0,
      synced: r.synced,
      verdicts: r.verdicts,
    };
  },
});
