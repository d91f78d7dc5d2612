import type { Knex } from 'knex';
import type { Row } from './row';
import { paginate, rows, whereGiven, type PageRequest, type RowPage } from './paging';

/**
 * The provider connections list (GET /v1/providers): safe columns only. Ciphertexts are never
 * read on an API path; the page says only whether each one is present.
 */
export function connectionPage(trx: Knex.Transaction, filters: { provider?: string }, page: PageRequest): Promise<RowPage> {
  const base = whereGiven(trx('provider_connections'), 'provider_connections', filters);
  const columns = ['id', 'provider', 'account_ref', 'label', 'is_default', 'is_active', 'created_at'].map((c) => `provider_connections.${c}`);
  const flags = [
    trx.raw('credential_test_enc is not null as has_test'),
    trx.raw('credential_live_enc is not null as has_live'),
    trx.raw('webhook_secret_enc is not null as has_whsec'),
  ];
  return paginate(base, { ...page, table: 'provider_connections', columns: [...columns, ...flags] }, rows);
}

/**
 * What these connections sell through, in one statement: payment links and provider plans, each
 * row with its connection, app, external id, url (plans have none), mode, the product's SKU and
 * its kind (`payment_link` or `plan`).
 */
export async function sellingObjectsOf(trx: Knex.Transaction, connectionIds: string[]): Promise<Row[]> {
  if (!connectionIds.length) return [];
  return trx('payment_links').join('products', 'products.id', 'payment_links.product_id').whereIn('payment_links.connection_id', connectionIds)
    .select('payment_links.connection_id', 'payment_links.app_id', 'payment_links.external_id', 'payment_links.url', 'payment_links.mode', 'products.sku', trx.raw("'payment_link' as kind"))
    .unionAll((q) => q.from('provider_plans').join('products', 'products.id', 'provider_plans.product_id').whereIn('provider_plans.connection_id', connectionIds)
      .select('provider_plans.connection_id', 'provider_plans.app_id', 'provider_plans.external_id', trx.raw('null as url'), 'provider_plans.mode', 'products.sku', trx.raw("'plan' as kind")));
}
