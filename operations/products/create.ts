import { z } from 'zod';
import { createProduct, DuplicateSku } from '../../db/products';
import { SKU_RE } from '../../domain/catalogue';
import { ApiError } from '../errors';
import { defineOperation } from '../types';
import { loadProductDetail } from './get';
import { checkTrial, fields, writeResult } from './schema';

export const createProductOp = defineOperation({
  name: 'products.create',
  summary: 'Add a product (not on sale until synced); a duplicate SKU is refused unless upsert',
  scope: 'products:write',
  write: true,
  input: z
    .object({
      sku: z.string().regex(SKU_RE, 'lower-case letters, digits, dots, underscores, hyphens (1–100)'),
      ...fields,
      upsert: z.boolean().optional(),
    })
    .strict(),
  output: writeResult,
  // The CI client writes the catalogue file through this route (docs/ci.md).
  rest: { method: 'POST', path: '/products' },
  errors: [409],
  pages: [
    { page: '/products/new', gates: ['open', 'act'] },
    { page: '/products', gates: ['act'] },
  ],
  tool: {
    name: 'billing_create_product',
    title: 'Create Product',
    description:
      'Add a product (once per tier). Not on sale until billing_sync_product; answers synced: false. A duplicate SKU is refused unless upsert: true.',
    // Catalogue only: nothing reaches a provider until billing_sync_product.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  },
  async handler(ctx, input) {
    checkTrial(input.trial_per_platform);
    const { upsert, ...product } = input;
    return ctx.tx(async (trx) => {
      try {
        const r = await createProduct(trx, ctx.tenantId, product, { upsert });
        return { ...(await loadProductDetail(trx, r.product.id)), created: r.created };
      } catch (e) {
        if (e instanceof DuplicateSku) throw new ApiError(409, 'duplicate_sku', e.message, { param: 'sku' });
        throw e;
      }
    });
  },
});
