import type { Knex } from 'knex';

/**
 * A held Play purchase can only be re-read at Play (`purchases.subscriptionsv2.get`) with its
 * purchase token, and a reconciliation must re-read it (docs/reconciliation.md). The token is a
 * bearer secret for the purchase: it is kept sealed by the vault (AAD naming tenant, provider and
 * token hash, `providers/purchase-ref.ts`), beside the hash the claim is keyed by, from the
 * registration or the store import that claimed it. Rows claimed before have none: their
 * purchase is reported as not re-readable until the app registers it again. App Store rows need
 * nothing: the original transaction id is their key.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table store_purchase_tokens add column if not exists purchase_token_enc text');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table store_purchase_tokens drop column if exists purchase_token_enc');
}
