import type { Knex } from 'knex';
import type { PriceInput } from '../domain/catalogue';

/**
 * Catalogue writes, in the caller's tenant transaction. Every change bumps the product's
 * `version`, which is how the sync knows a provider object is behind.
 */
export interface ProductInput {
  sku: string;
  name?: string;
  type?: string;
  kind?: 'digital' | 'physical';
  tier?: string | null;
  android_store_product_id?: string | null;
  ios_store_product_id?: string | null;
  trial_per_platform?: Record<string, number> | null;
}

const COLUMNS = ['name', 'type', 'kind', 'tier', 'android_store_product_id', 'ios_store_product_id', 'trial_per_platform'] as const;

function columnsOf(input: Partial<ProductInput>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const c of COLUMNS) {
    if (input[c] === undefined) continue;
    out[c] = c === 'trial_per_platform' && input[c] !== null ? JSON.stringify(input[c]) : input[c];
  }
  return out;
}

export class DuplicateSku extends Error {}

/** Create; an existing SKU is refused unless `upsert`, which merges the given fields into it. */
export async function createProduct(trx: Knex.Transaction, tenantId: string, input: ProductInput, opts: { upsert?: boolean } = {}) {
  const existing = await trx('products').where({ sku: input.sku }).first('id');
  if (existing) {
    if (!opts.upsert) throw new DuplicateSku(`a product with SKU "${input.sku}" exists; pass upsert: true to update it`);
    return { product: await updateProduct(trx, existing.id, input), created: false };
  }
  const [row] = await trx('products')
    .insert({ tenant_id: tenantId, sku: input.sku, name: input.name ?? input.sku, ...columnsOf(input) })
    .returning('*');
  return { product: row, created: true };
}

/** Merge-safe: only the named fields change (`trial_per_platform: null` clears it); the version moves only on a real change. */
export async function updateProduct(trx: Knex.Transaction, id: string, patch: Partial<ProductInput>) {
  const current = await trx('products').where({ id }).first();
  const values = columnsOf(patch);
  const changed = Object.entries(values).some(([k, v]) => JSON.stringify(k === 'trial_per_platform' && typeof v === 'string' ? JSON.parse(v) : v) !== JSON.stringify(current[k] ?? null));
  if (!changed) return current;
  const [row] = await trx('products').where({ id }).update({ ...values, version: trx.raw('version + 1'), updated_at: trx.fn.now() }).returning('*');
  return row;
}

/** Upsert prices per (country, currency); others stay. The product's version moves when any amount changes. */
export async function setPrices(trx: Knex.Transaction, tenantId: string, productId: string, prices: readonly PriceInput[]): Promise<{ changed: number }> {
  let changed = 0;
  for (const p of prices) {
    const cur = await trx('prices').where({ product_id: productId, country: p.country, currency: p.currency }).first('amount_minor');
    if (cur && Number(cur.amount_minor) === p.amount) continue;
    await trx('prices')
      .insert({ tenant_id: tenantId, product_id: productId, country: p.country, currency: p.currency, amount_minor: p.amount })
      .onConflict(['product_id', 'country', 'currency'])
      .merge({ amount_minor: p.amount, updated_at: trx.fn.now() });
    changed++;
  }
  if (changed) await trx('products').where({ id: productId }).update({ version: trx.raw('version + 1'), updated_at: trx.fn.now() });
  return { changed };
}
