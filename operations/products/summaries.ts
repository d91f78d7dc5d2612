import { z } from 'zod';
import { listProductsWithPriceCounts } from '../../db/products';
import { isoReq } from '../paging';
import { id, timestamp } from '../schemas';
import { defineOperation } from '../types';

export const productSummary = z.object({
  id: id(),
  sku: z.string(),
  name: z.string(),
  tier: z.enum(['weekly', 'monthly', 'quarterly', 'annual']).nullable(),
  active: z.boolean(),
  updated_at: timestamp,
  prices: z.number().int().describe('how many prices the product has'),
});

/**
 * The whole catalogue as one table, by SKU, each product with its count of prices: what the
 * dashboard's product list and the grant form's product choice show. No REST route and no tool:
 * the API's list (`products.list`) is paged and carries each product's provider references instead.
 */
export const summarizeProducts = defineOperation({
  name: 'products.summaries',
  summary: 'Every product by SKU with its count of prices (the dashboard’s catalogue table)',
  scope: 'products:read',
  write: false,
  input: z.object({}).strict(),
  output: z.object({ data: z.array(productSummary) }),
  async handler(ctx) {
    const rows = await ctx.read((reader) => listProductsWithPriceCounts(reader));
    return {
      data: rows.map((r) => ({
        id: r.id,
        sku: r.sku,
        name: r.name,
        tier: (r.tier ?? null) as z.infer<typeof productSummary>['tier'],
        active: r.active,
        updated_at: isoReq(r.updated_at),
        prices: r.prices,
      })),
    };
  },
});
