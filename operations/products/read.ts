import { z } from 'zod';
import type { Tx } from '../../db/transaction';
import { isUuid } from '../../domain/ids';
import { productPage, productWithPricing, providerRefsByProduct } from '../../db/products';
import { notFound } from '../errors';
import { defineOperation } from '../types';
import { filter, id, pageOf, paging, productDetail, productRow } from '../schemas';
import { serializePrice, serializeProduct } from '../serializers';

export const listProducts = defineOperation({
  name: 'products.list',
  summary: 'List the catalogue; rows carry the provider ids each product synced to',
  scope: 'products:read',
  write: false,
  input: z.object({ ...paging, sku: filter.optional(), type: filter.optional() }).strict(),
  output: pageOf(productRow),
  rest: { method: 'GET', path: '/products' },
  async handler(ctx, input) {
    return ctx.tx(async (trx) => {
      // Not the Product model: its path measured over the 5 % bar against the plain statements
      // (db/products.ts gives the bench figures).
      const page = await productPage(trx, { sku: input.sku, type: input.type }, input);
      const refs = await providerRefsByProduct(trx, page.data.map((p) => p.id));
      return { ...page, data: page.data.map((p) => serializeProduct(p, refs.get(p.id) ?? [])) };
    });
  },
});

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
  async handler(ctx, input) {
    return ctx.tx((trx) => loadProductDetail(trx, input.id));
  },
});
