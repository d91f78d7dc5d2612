import { z } from 'zod';
import { productWithPricing } from '../../db/products';
import type { Tx } from '../../db/transaction';
import { isUuid } from '../../domain/ids';
import { notFound } from '../errors';
import { id } from '../schemas';
import { defineOperation } from '../types';
import { productDetail, serializePrice, serializeProduct } from './schema';

/** Shared by REST, tools and the sync operations: a product with refs and pricing, or 404. */
export async function loadProductDetail(trx: Tx, id: string) {
  // A malformed id and another tenant's id get the same 404 as a missing one: existence never leaks.
  if (!isUuid(id)) throw notFound('product');
  const p = await productWithPricing(trx, id);
  if (!p) throw notFound('product');
  return { ...serializeProduct(p, p.providerRefs ?? []), pricing: (p.prices ?? []).map(serializePrice) };
}

export const getProduct = defineOperation({
  name: 'products.get',
  summary: 'One product with its per-currency pricing rows',
  scope: 'products:read',
  write: false,
  input: z.object({ id: id('product id (uuid)') }).strict(),
  output: productDetail,
  rest: { method: 'GET', path: '/products/{id}' },
  errors: [404],
  tool: {
    name: 'billing_product',
    title: 'Product',
    description: 'One product with its pricing rows. Takes `id`.',
    namesProduct: true,
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  async handler(ctx, input) {
    return ctx.tx((trx) => loadProductDetail(trx, input.id));
  },
});
