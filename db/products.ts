import type { Knex } from 'knex';
import type { PriceInput } from '../domain/catalogue';
import { isUuid } from '../domain/ids';
import { Product } from './models';
import { noteReadinessChange } from './outbound-events';
import type { Row } from './row';
import { pageFromSql, readerOf, rows, type PageRequest, type PageSource, type RowPage } from './paging';
import { isoTimestampTypes } from './timestamps';

/**
 * The catalogue's statements, in the caller's tenant transaction, each written the way the data
 * layer's rule says (docs/data-layer.md, "One SQL rule"): writes and plain reads through the knex
 * builder, the list page and its provider refs as written SQL, one product with its relations
 * through the model's graph fetch.
 *
 * Every change bumps the product's `version`, which is how the sync knows a provider object is
 * behind; readiness judges both the active products and whether they are synced, so each change
 * also tells readiness.changed.
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
  entitlement?: string | null;
}

const COLUMNS = [
  'name',
  'type',
  'kind',
  'tier',
  'android_store_product_id',
  'ios_store_product_id',
  'trial_per_platform',
  'entitlement',
] as const;

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
export async function createProduct(
  trx: Knex.Transaction,
  tenantId: string,
  input: ProductInput,
  opts: { upsert?: boolean } = {},
) {
  const existing = await trx('products').where({ sku: input.sku }).first('id');
  if (existing) {
    if (!opts.upsert)
      throw new DuplicateSku(`a product with SKU "${input.sku}" exists; pass upsert: true to update it`);
    return { product: await updateProduct(trx, existing.id, input), created: false };
  }
  const [row] = await trx('products')
    .insert({ tenant_id: tenantId, sku: input.sku, name: input.name ?? input.sku, ...columnsOf(input) })
    .returning('*');
  await noteReadinessChange(trx, tenantId);
  return { product: row, created: true };
}

/**
 * Merge-safe: only the named fields change (`trial_per_platform: null` clears it); the version moves only on a real
 * change.
 */
export async function updateProduct(trx: Knex.Transaction, id: string, patch: Partial<ProductInput>) {
  const current = await trx('products').where({ id }).first();
  const values = columnsOf(patch);
  const changed = Object.entries(values).some(
    ([k, v]) =>
      JSON.stringify(k === 'trial_per_platform' && typeof v === 'string' ? JSON.parse(v) : v) !==
      JSON.stringify(current[k] ?? null),
  );
  if (!changed) return current;
  const [row] = await trx('products')
    .where({ id })
    .update({ ...values, version: trx.raw('version + 1'), updated_at: trx.fn.now() })
    .returning('*');
  await noteReadinessChange(trx, row.tenant_id);
  return row;
}

/** Upsert prices per (country, currency); others stay. The product's version moves when any amount changes. */
export async function setPrices(
  trx: Knex.Transaction,
  tenantId: string,
  productId: string,
  prices: readonly PriceInput[],
): Promise<{ changed: number }> {
  let changed = 0;
  for (const p of prices) {
    const cur = await trx('prices')
      .where({ product_id: productId, country: p.country, currency: p.currency })
      .first('amount_minor');
    if (cur && Number(cur.amount_minor) === p.amount) continue;
    await trx('prices')
      .insert({
        tenant_id: tenantId,
        product_id: productId,
        country: p.country,
        currency: p.currency,
        amount_minor: p.amount,
      })
      .onConflict(['product_id', 'country', 'currency'])
      .merge({ amount_minor: p.amount, updated_at: trx.fn.now() });
    changed++;
  }
  if (changed) {
    await trx('products')
      .where({ id: productId })
      .update({ version: trx.raw('version + 1'), updated_at: trx.fn.now() });
    await noteReadinessChange(trx, tenantId);
  }
  return { changed };
}

/**
 * The catalogue list page. Not Product.fetchGraph('providerRefs'): the model path made the same
 * statements but cost over the 5 % bar in bench/models-vs-knex.ts (bench/RESULTS.md). The
 * single-product read below uses the model's graph fetch.
 */
export function productPage(
  src: PageSource,
  filters: { sku?: string; type?: string },
  page: PageRequest,
): Promise<RowPage> {
  return pageFromSql(src, { table: 'products', columns: 'products.*', from: 'products', filters }, page, rows);
}

/**
 * The provider refs of these products, by product id (ordered by provider, then mode). The ids
 * travel as one array parameter, so the statement's text is the same for any page size and it
 * runs prepared (db/knex.ts), like the page before it.
 */
export async function providerRefsByProduct(src: PageSource, productIds: string[]): Promise<Map<string, Row[]>> {
  if (!productIds.length) return new Map();
  // A Postgres array literal: knex would spread a JS array into one placeholder per element.
  const ids = `{${productIds.map((id) => (isUuid(id) ? id : invalidId(id))).join(',')}}`;
  const refs = await readerOf(src).rows(
    'select * from product_provider_refs where product_id = any($1::uuid[]) order by provider, mode',
    [ids],
    { types: isoTimestampTypes },
  );
  const by = new Map<string, Row[]>();
  for (const r of refs as Row[]) {
    const list = by.get(r.product_id);
    if (list) list.push(r);
    else by.set(r.product_id, [r]);
  }
  return by;
}

function invalidId(id: string): never {
  throw new Error(`providerRefsByProduct: not a product id: ${id}`);
}

/**
 * One product with its provider refs and prices, or undefined: the model's graph fetch (three
 * queries, as the hand-written version made). The id must already be a uuid.
 */
export function productWithPricing(trx: Knex.Transaction, id: string) {
  return Product.query(trx)
    .findById(id)
    .withGraphFetched('[providerRefs(byProviderMode), prices(byCountry)]')
    .modifiers({
      byProviderMode: (q) => void q.orderBy(['provider', 'mode']),
      byCountry: (q) => void q.orderBy(['country', 'currency']),
    });
}

/** The id of the product with this id or this SKU in the tenant, or undefined. The id must already be a uuid. */
export async function productIdWhere(
  trx: Knex.Transaction,
  where: { id: string } | { sku: string },
): Promise<string | undefined> {
  const row = await trx('products').where(where).first('id');
  return row?.id;
}

/** The catalogue table's rows (operations/products/summaries.ts: the dashboard's products page and grant form). */
export interface ProductListRow {
  id: string;
  sku: string;
  name: string;
  tier: string | null;
  active: boolean;
  updated_at: string;
  /** How many prices the product has. */
  prices: number;
}

/** Every product of the tenant by sku, with its price count: one statement, in a tenant read. */
export async function listProductsWithPriceCounts(src: PageSource): Promise<ProductListRow[]> {
  return (await readerOf(src).rows(
    `select p.id, p.sku, p.name, p.tier, p.active, p.updated_at, count(pr.id)::int as prices
       from products p left join prices pr on pr.product_id = p.id
      group by p.id order by p.sku`,
    [],
    { types: isoTimestampTypes },
  )) as ProductListRow[];
}

/** Which of these skus the tenant's catalogue has. */
export async function knownSkus(trx: Knex.Transaction, skus: readonly string[]): Promise<Set<string>> {
  return new Set(
    await trx('products')
      .whereIn('sku', [...skus])
      .pluck('sku'),
  );
}
