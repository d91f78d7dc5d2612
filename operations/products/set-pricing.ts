import { z } from 'zod';
import { setPrices } from '../../db/products';
import { priceProblem } from '../../domain/catalogue';
import { invalidRequest } from '../errors';
import { defineOperation } from '../types';
import { loadProductDetail } from './get';
import { resolveProductRef } from './ref';
import { productRef, writeResult } from './schema';

export const setPricingOp = defineOperation({
  name: 'products.set_pricing',
  summary: 'Upsert per-country prices of a product (never reaches a store until synced)',
  scope: 'products:write',
  write: true,
  input: z
    .object({
      ...productRef,
      prices: z
        .array(z.object({ country: z.string(), currency: z.string(), amount: z.number() }).strict())
        .min(1)
        .max(250)
        .describe('[{country: ISO 3166-1 alpha-2, currency: ISO 4217, amount: minor units}]'),
    })
    .strict(),
  output: writeResult.extend({
    changed: z.number().int().describe('how many prices changed (0: each was already so)'),
  }),
  // The CI client writes the catalogue file's prices through this route (docs/ci.md).
  rest: { method: 'POST', path: '/products/{product_id}/prices' },
  errors: [404],
  tool: {
    name: 'billing_set_product_pricing',
    title: 'Set Product Pricing',
    description:
      'Upsert prices per country and currency (amount in minor units). Does not reach any provider: run billing_sync_product next.',
    // Catalogue only, as above.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  async handler(ctx, input) {
    const problem = priceProblem(input.prices);
    if (problem) throw invalidRequest(problem[1], problem[0]);
    return ctx.tx(async (trx) => {
      const id = await resolveProductRef(trx, input);
      const { changed } = await setPrices(trx, ctx.tenantId, id, input.prices);
      return { ...(await loadProductDetail(trx, id)), changed };
    });
  },
});
