import type { Knex } from 'knex';

/**
 * Store purchase registration.
 *
 * - A purchase token belongs to one app user per tenant: the unique key is (tenant, provider,
 *   token hash), so reuse by another app user of the same tenant is a unique violation whatever
 *   process or workflow run tries it (→ 409 purchase_token_reused). The old key was global
 *   (provider, token hash): one tenant's registration would then collide with a row another
 *   tenant cannot even see under RLS.
 * - `subscriptions.store_read_at`: when the store's server API answer a store subscription row
 *   was written from was read. Registration and notifications re-read the store concurrently;
 *   only an answer read later than the one on the row may overwrite it, so a slow, stale read
 *   never undoes a newer one (e.g. a refund).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('store_purchase_tokens', (t) => {
    t.dropUnique(['provider', 'token_hash']);
    t.unique(['tenant_id', 'provider', 'token_hash']);
    t.uuid('subscription_id').references('subscriptions.id').onDelete('SET NULL');
  });
  await knex.schema.alterTable('subscriptions', (t) => {
    t.timestamp('store_read_at', { useTz: true });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('subscriptions', (t) => {
    t.dropColumn('store_read_at');
  });
  await knex.schema.alterTable('store_purchase_tokens', (t) => {
    t.dropColumn('subscription_id');
    t.dropUnique(['tenant_id', 'provider', 'token_hash']);
    t.unique(['provider', 'token_hash']);
  });
}
