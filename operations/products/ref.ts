import type { Tx } from '../../db/transaction';
import { isUuid } from '../../domain/ids';
import { productIdWhere } from '../../db/products';
import { invalidRequest, notFound } from '../errors';
import type { OperationContext } from '../types';

/**
 * The one way a caller names a product: `product_id` or `sku`, exactly one. Answers the
 * product's id in this tenant, or 404 (a malformed id, another tenant's product and a missing one
 * look the same). It reads the catalogue, so it runs only after the operation's scope check
 * (`executeOperation`): a key without the scope must not learn which SKUs exist.
 */
export async function resolveProductRef(trx: Tx, ref: { product_id?: unknown; sku?: unknown }): Promise<string> {
  const { product_id, sku } = ref;
  if (product_id !== undefined && sku !== undefined) throw invalidRequest('give product_id or sku, not both', 'sku');
  if (product_id !== undefined) {
    if (typeof product_id !== 'string') throw invalidRequest('product_id must be a string', 'product_id');
    const id = isUuid(product_id) ? await productIdWhere(trx, { id: product_id }) : undefined;
    if (!id) throw notFound('product');
    return id;
  }
  if (sku === undefined || sku === '') throw invalidRequest('name the product with product_id or sku', 'product_id');
  if (typeof sku !== 'string') throw invalidRequest('sku must be a string', 'sku');
  const id = await productIdWhere(trx, { sku });
  if (!id) throw notFound(`product with SKU ${JSON.stringify(sku)}`);
  return id;
}

/**
 * `{product_id | sku, ...rest}` → `{id, ...rest}`: how a tool names the product of an operation
 * that takes its id (GET /products/{id}, POST /products/{id}/sync). Passed to executeOperation
 * as `resolveInput`, so it runs after the scope check.
 */
export async function productRefAsId(
  ctx: OperationContext,
  args: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const { product_id, sku, ...rest } = args;
  return { ...rest, id: await ctx.tx((trx) => resolveProductRef(trx, { product_id, sku })) };
}
