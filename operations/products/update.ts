import { z } from 'zod';
import { updateProduct } from '../../db/products';
import { defineOperation } from '../types';
import { loadProductDetail } from './get';
import { resolveProductRef } from './ref';
import { checkTrial, fields, productRef, writeResult } from './schema';

export const updateProductOp = defineOperation({
  name: 'products.update',
  summary: 'Change the named fields of a product (merge-safe; trial_per_platform: null clears it)',
  scope: 'products:write',
  write: true,
  input: z.object({ ...productRef, ...fields }).strict(),
  output: writeResult,
  tool: {
    name: 'billing_update_product',
    title: 'Update Product',
    description:
      'Change only the fields you name; trial_per_platform: null clears it. The product needs a sync afterwards (synced: false).',
    // Catalogue only, as above.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  async handler(ctx, input) {
    checkTrial(input.trial_per_platform);
    const { product_id, sku, ...patch } = input;
    return ctx.tx(async (trx) => {
      const id = await resolveProductRef(trx, { product_id, sku });
      await updateProduct(trx, id, patch);
      return loadProductDetail(trx, id);
    });
  },
});
