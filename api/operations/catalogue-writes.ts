import { z } from 'zod';
import type { Knex } from 'knex';
import { PRODUCT_TYPES, TIERS, SKU_RE, ANDROID_ID_RE, priceProblem, trialProblem } from '../../domain/catalogue';
import { createProduct, DuplicateSku, setPrices, updateProduct } from '../../db/products';
import { ApiError, invalidRequest, notFound } from '../errors';
import { defineOperation } from './types';
import { productDetail, UUID_RE } from './schemas';
import { loadProductDetail } from './read-products';

const productRef = {
  product_id: z.string().optional().describe('the product id (uuid); or give sku'),
  sku: z.string().optional().describe('the product SKU; or give product_id'),
};
const fields = {
  name: z.string().min(1).max(200).optional(),
  type: z.enum(PRODUCT_TYPES).optional().describe('subscription'),
  tier: z.enum(TIERS).nullable().optional().describe('billing tier: weekly, monthly, quarterly or annual'),
  kind: z.enum(['digital', 'physical']).optional(),
  android_store_product_id: z.string().regex(ANDROID_ID_RE, 'lower-case letters, digits, dots, underscores, hyphens').nullable().optional().describe("equals the Android store's subscription base-plan id"),
  ios_store_product_id: z.string().min(1).max(200).nullable().optional(),
  trial_per_platform: z.record(z.string(), z.number()).nullable().optional().describe('days of trial per platform (web, desktop, ios, macos, android); null clears it'),
};
const writeResult = productDetail.extend({ created: z.boolean().optional() });

/** The product a tool names by product_id or sku, in this tenant; 404 otherwise (existence never leaks). */
export async function productIdOf(trx: Knex.Transaction, ref: { product_id?: string; sku?: string }): Promise<string> {
  if (ref.product_id !== undefined && ref.sku !== undefined) throw invalidRequest('give product_id or sku, not both', 'sku');
  if (ref.product_id !== undefined) {
    if (!UUID_RE.test(ref.product_id)) throw notFound('product');
    const row = await trx('products').where({ id: ref.product_id }).first('id');
    if (!row) throw notFound('product');
    return row.id;
  }
  if (ref.sku === undefined) throw invalidRequest('name the product with product_id or sku', 'product_id');
  const row = await trx('products').where({ sku: ref.sku }).first('id');
  if (!row) throw notFound('product');
  return row.id;
}

function checkTrial(t: unknown) {
  if (t === undefined) return;
  const problem = trialProblem(t);
  if (problem) throw invalidRequest(problem, 'trial_per_platform');
}

export const createProductOp = defineOperation({
  name: 'products.create',
  summary: 'Add a product (not on sale until synced); a duplicate SKU is refused unless upsert',
  scope: 'products:write',
  write: true,
  input: z.object({ sku: z.string().regex(SKU_RE, 'lower-case letters, digits, dots, underscores, hyphens (1–100)'), ...fields, upsert: z.boolean().optional() }).strict(),
  output: writeResult,
  tool: { name: 'billing_create_product', description: 'Add a product (once per tier). Not on sale until billing_sync_product; answers synced: false. A duplicate SKU is refused unless upsert: true.', idempotent: false },
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

export const updateProductOp = defineOperation({
  name: 'products.update',
  summary: 'Change the named fields of a product (merge-safe; trial_per_platform: null clears it)',
  scope: 'products:write',
  write: true,
  input: z.object({ ...productRef, ...fields }).strict(),
  output: writeResult,
  tool: { name: 'billing_update_product', description: 'Change only the fields you name; trial_per_platform: null clears it. The product needs a sync afterwards (synced: false).', idempotent: true },
  async handler(ctx, input) {
    checkTrial(input.trial_per_platform);
    const { product_id, sku, ...patch } = input;
    return ctx.tx(async (trx) => {
      const id = await productIdOf(trx, { product_id, sku });
      await updateProduct(trx, id, patch);
      return loadProductDetail(trx, id);
    });
  },
});

export const setPricingOp = defineOperation({
  name: 'products.set_pricing',
  summary: 'Upsert per-country prices of a product (never reaches a store until synced)',
  scope: 'products:write',
  write: true,
  input: z.object({
    ...productRef,
    prices: z.array(z.object({ country: z.string(), currency: z.string(), amount: z.number() }).strict()).min(1).max(250)
      .describe('[{country: ISO 3166-1 alpha-2, currency: ISO 4217, amount: minor units}]'),
  }).strict(),
  output: writeResult,
  tool: { name: 'billing_set_product_pricing', description: 'Upsert prices per country and currency (amount in minor units). Does not reach any provider: run billing_sync_product next.', idempotent: true },
  async handler(ctx, input) {
    const problem = priceProblem(input.prices);
    if (problem) throw invalidRequest(problem[1], problem[0]);
    return ctx.tx(async (trx) => {
      const id = await productIdOf(trx, input);
      await setPrices(trx, ctx.tenantId, id, input.prices);
      return loadProductDetail(trx, id);
    });
  },
});
