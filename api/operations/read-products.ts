import { z } from 'zod';
import type { Knex } from 'knex';
import { Product } from '../../db/models';
import { notFound } from '../errors';
import { defineOperation } from './types';
import { filter, id, pageOf, paging, productDetail, productRow, UUID_RE } from './schemas';
import { paginate, whereGiven } from './paging';
import * as s from './serializers';

async function refsByProduct(trx: Knex.Transaction, ids: string[]) {
  const refs = ids.length ? await trx('product_provider_refs').whereIn('product_id', ids).orderBy(['provider', 'mode']) : [];
  const by = new Map<string, any[]>();
  for (const r of refs) by.set(r.product_id, [...(by.get(r.product_id) ?? []), r]);
  return by;
}

export const listProducts = defineOperation({
  name: 'products.list',
  summary: 'List the catalogue; rows carry the provider ids each product synced to',
  scope: 'products:read',
  write: false,
  input: z.object({ ...paging, sku: filter.optional(), type: filter.optional() }).strict(),
  output: pageOf(productRow),
  rest: { method: 'GET', path: '/products' },
  tool: { name: 'billing_products', description: 'List the product catalogue (filters: sku, type; paged).' },
  async handler(ctx, input) {
    return ctx.tx(async (trx) => {
      // Plain knex, not Product.fetchGraph('providerRefs'): the model path made the same four
      // statements but cost +15 % to +100 % req/s in 4 of 5 interleaved runs of
      // bench/models-vs-knex.ts (2026-11-23, 2 shared cores at load 8–13; bench/RESULTS.md),
      // over the 5 % bar. The single-product read below uses the model's graph fetch.
      const page = await paginate(whereGiven(trx('products'), 'products', { sku: input.sku, type: input.type }), { ...input, table: 'products' }, (r: any) => r);
      const refs = await refsByProduct(trx, page.data.map((p: any) => p.id));
      return { ...page, data: page.data.map((p: any) => s.product(p, refs.get(p.id) ?? [])) };
    });
  },
});

/** Shared by REST, tools and the sync operations: a product with refs and pricing, or 404. */
export async function loadProductDetail(trx: Knex.Transaction, id: string) {
  // A malformed id and another tenant's id get the same 404 as a missing one: existence never leaks.
  if (!UUID_RE.test(id)) throw notFound('product');
  // The model's graph fetch (three queries, as the hand-written version made) in the tenant transaction.
  const p = await Product.query(trx)
    .findById(id)
    .withGraphFetched('[providerRefs(byProviderMode), prices(byCountry)]')
    .modifiers({
      byProviderMode: (q) => q.orderBy(['provider', 'mode']),
      byCountry: (q) => q.orderBy(['country', 'currency']),
    });
  if (!p) throw notFound('product');
  return { ...s.product(p, p.providerRefs ?? []), pricing: (p.prices ?? []).map(s.price) };
}

export const getProduct = defineOperation({
  name: 'products.get',
  summary: 'One product with its per-currency pricing rows',
  scope: 'products:read',
  write: false,
  input: z.object({ id: id('product id (uuid)') }).strict(),
  output: productDetail,
  rest: { method: 'GET', path: '/products/{id}' },
  tool: { name: 'billing_product', description: 'One product with its pricing rows. Takes `id`.' },
  errors: [404],
  async handler(ctx, input) {
    return ctx.tx((trx) => loadProductDetail(trx, input.id));
  },
});
