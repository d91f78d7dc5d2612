import { z } from 'zod';
import type { Row } from '../../db/row';
import { ANDROID_ID_RE, PRODUCT_TYPES, TIERS, trialProblem } from '../../domain/catalogue';
import { isProductSynced } from '../../domain/product-sync';
import { DEFAULT_ENTITLEMENT, ENTITLEMENT_ID_RE } from '../../domain/revenuecat';
import { invalidRequest } from '../errors';
import { isoReq } from '../paging';
import { id, mode, provider, timestamp } from '../schemas';

export const productRow = z.object({
  id: id(),
  object: z.literal('product'),
  sku: z.string(),
  name: z.string(),
  type: z.string(),
  kind: z.enum(['digital', 'physical']),
  tier: z.enum(['weekly', 'monthly', 'quarterly', 'annual']).nullable(),
  android_store_product_id: z.string().nullable(),
  ios_store_product_id: z.string().nullable(),
  trial_per_platform: z.record(z.string(), z.unknown()).nullable(),
  entitlement: z.string().describe('the entitlement the product unlocks (premium unless named)'),
  active: z.boolean(),
  version: z.number().int(),
  provider_ids: z.record(z.string(), z.string()).describe('provider → id of the product there (one per provider)'),
  provider_refs: z.array(
    z.object({ provider, mode, external_id: z.string(), synced_version: z.number().int(), synced_at: timestamp }),
  ),
  synced: z.boolean().describe('true when every reference carries the current version'),
  created_at: timestamp,
  updated_at: timestamp,
});

export const priceRow = z.object({
  id: id(),
  object: z.literal('price'),
  country: z.string(),
  currency: z.string(),
  locale: z.string(),
  amount_minor: z.number().int(),
  updated_at: timestamp,
});

export const productDetail = productRow.extend({ pricing: z.array(priceRow) });

/** Row → public shape. Columns not named here (ciphertexts above all) never leave the service. */

export function serializeProductRef(r: Row) {
  return {
    provider: r.provider,
    mode: r.mode,
    external_id: r.external_id,
    synced_version: r.synced_version,
    synced_at: isoReq(r.synced_at),
  };
}

export function serializeProduct(r: Row, refs: Row[]) {
  const provider_ids: Record<string, string> = {};
  // One id per provider: the live object when there is one, else the test object.
  for (const ref of [...refs].sort((a, b) => (a.mode === 'live' ? 1 : 0) - (b.mode === 'live' ? 1 : 0)))
    provider_ids[ref.provider] = ref.external_id;
  return {
    id: r.id,
    object: 'product' as const,
    sku: r.sku,
    name: r.name,
    type: r.type,
    kind: r.kind,
    tier: r.tier ?? null,
    android_store_product_id: r.android_store_product_id ?? null,
    ios_store_product_id: r.ios_store_product_id ?? null,
    trial_per_platform: r.trial_per_platform ?? null,
    entitlement: r.entitlement ?? DEFAULT_ENTITLEMENT,
    active: r.active,
    version: r.version,
    provider_ids,
    provider_refs: refs.map(serializeProductRef),
    synced: isProductSynced(r as { version: number }, refs as { synced_version: number }[]),
    created_at: isoReq(r.created_at),
    updated_at: isoReq(r.updated_at),
  };
}

export function serializePrice(r: Row) {
  return {
    id: r.id,
    object: 'price' as const,
    country: r.country,
    currency: r.currency,
    locale: `${r.country}-${r.currency}`,
    amount_minor: Number(r.amount_minor),
    updated_at: isoReq(r.updated_at),
  };
}

export const productRef = {
  product_id: z.string().optional().describe('the product id (uuid); or give sku'),
  sku: z.string().optional().describe('the product SKU; or give product_id'),
};
export const fields = {
  name: z.string().min(1).max(200).optional(),
  type: z.enum(PRODUCT_TYPES).optional().describe('subscription'),
  tier: z.enum(TIERS).nullable().optional().describe('billing tier: weekly, monthly, quarterly or annual'),
  kind: z.enum(['digital', 'physical']).optional(),
  android_store_product_id: z
    .string()
    .regex(ANDROID_ID_RE, 'lower-case letters, digits, dots, underscores, hyphens')
    .nullable()
    .optional()
    .describe("equals the Android store's subscription base-plan id"),
  ios_store_product_id: z.string().min(1).max(200).nullable().optional(),
  trial_per_platform: z
    .record(z.string(), z.number())
    .nullable()
    .optional()
    .describe('days of trial per platform (web, desktop, ios, macos, android); null clears it'),
  entitlement: z
    .string()
    .regex(ENTITLEMENT_ID_RE, '1–100 letters, digits, ".", "_", ":" or "-"')
    .nullable()
    .optional()
    .describe('the entitlement the product unlocks, as client apps name it (premium when unset; null resets it)'),
};
export const writeResult = productDetail.extend({ created: z.boolean().optional() });

export function checkTrial(t: unknown) {
  if (t === undefined) return;
  const problem = trialProblem(t);
  if (problem) throw invalidRequest(problem, 'trial_per_platform');
}
