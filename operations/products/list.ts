import { z } from 'zod';
import { productPage, providerRefsByProduct } from '../../db/products';
import { filter, pageOf, paging } from '../schemas';
import { defineOperation } from '../types';
import { productRow, serializeProduct } from './schema';

export const listProducts = defineOperation({
  name: 'products.list',
  summary: 'List the catalogue; rows carry the provider ids each product synced to',
  scope: 'products:read',
  write: false,
  input: z.object({ ...paging, sku: filter.optional(), type: filter.optional() }).strict(),
  output: pageOf(productRow),
  rest: { method: 'GET', path: '/products' },
  pages: [{ page: '/products', gates: ['open'] }],
  tool: {
    name: 'billing_products',
    title: 'Products',
    description: 'List the product catalogue (filters: sku, type; paged).',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  async handler(ctx, input) {
    return ctx.read(async (reader) => {
      const page = await productPage(reader, { sku: input.sku, type: input.type }, input);
      const refs = await providerRefsByProduct(
        reader,
        page.data.map((p) => p.id),
      );
      return { ...page, data: page.data.map((p) => serializeProduct(p, refs.get(p.id) ?? [])) };
    });
  },
});
