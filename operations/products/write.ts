import { z } from 'zod';
import { PRODUCT_TYPES, TIERS, SKU_RE, ANDROID_ID_RE, priceProblem, trialProblem } from '../../domain/catalogue';
import { createProduct, DuplicateSku, setPrices, updateProduct } from '../../db/products';
import { ApiError, invalidRequest } from '../errors';
import { defineOperation } from '../types';
import { productDetail } from '../schemas';
import { resolveProductRef } from './ref';
import { loadProductDetail } from './read';

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
  async handler(ctx, input) {
    const problem = priceProblem(input.prices);
    if (problem) throw invalidRequest(problem[1], problem[0]);
    return ctx.tx(async (trx) => {
      const id = await resolveProductRef(trx, input);
      await setPrices(trx, ctx.tenantId, id, input.prices);
      return loadProductDetail(trx, id);
    });
  },
});
