import type { Knex } from 'knex';
import type { Row } from './row';
import { pageFromSql, readerOf, rows, type PageRequest, type PageSource, type RowPage } from './paging';

/**
 * The provider connections list (GET /v1/providers): safe columns only. Ciphertexts are never
 * read on an API path; the page says only whether each one is present.
 */
const CONNECTION_COLUMNS = [
  ...['id', 'provider', 'account_ref', 'label', 'is_default', 'is_active', 'created_at'].map(
    (c) => `provider_connections.${c}`,
  ),
  'provider_connections.credential_test_enc is not null as has_test',
  'provider_connections.credential_live_enc is not null as has_live',
  'provider_connections.webhook_secret_enc is not null as has_whsec',
].join(', ');

export function connectionPage(src: PageSource, filters: { provider?: string }, page: PageRequest): Promise<RowPage> {
  return pageFromSql(
    src,
    { table: 'provider_connections', columns: CONNECTION_COLUMNS, from: 'provider_connections', filters },
    page,
    rows,
  );
}

/**
 * What these connections sell through, in one statement: payment links and provider plans, each
 * row with its connection, app, external id, url (plans have none), mode, the product's SKU and
 * its kind (`payment_link` or `plan`).
 */
export async function sellingObjectsOf(src: PageSource, connectionIds: string[]): Promise<Row[]> {
  if (!connectionIds.length) return [];
  return readerOf(src).rows(
    `select l.connection_id, l.app_id, l.external_id, l.url, l.mode, p.sku, 'payment_link' as kind
       from payment_links l join products p on p.id = l.product_id where l.connection_id = any($1::uuid[])
     union all
     select pp.connection_id, pp.app_id, pp.external_id, null as url, pp.mode, p.sku, 'plan' as kind
       from provider_plans pp join products p on p.id = pp.product_id where pp.connection_id = any($1::uuid[])`,
    [`{${connectionIds.join(',')}}`],
  );
}

/**
 * The SKU of the product our sync made a provider's plan for, by the plan's id at the provider
 * (the seller's own side, kept here): null when the plan was not made by this catalogue.
 */
export async function skuOfSyncedPlan(
  trx: Knex.Transaction,
  plan: { connectionId: string; mode: string; externalId: string },
): Promise<string | null> {
  const row = await trx('provider_plans as pp')
    .join('products as p', 'p.id', 'pp.product_id')
    .where({ 'pp.connection_id': plan.connectionId, 'pp.mode': plan.mode, 'pp.external_id': plan.externalId })
    .first('p.sku');
  return row?.sku ?? null;
}
