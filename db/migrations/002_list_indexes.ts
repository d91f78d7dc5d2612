import type { Knex } from 'knex';

/** Indexes behind the remaining list filters and the newest-first order of every list. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_deliveries', (t) => t.index(['tenant_id', 'mode']));
  for (const table of ['coupons', 'provider_connections', 'sync_events']) {
    await knex.schema.alterTable(table, (t) => t.index(['tenant_id', 'created_at']));
  }
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_deliveries', (t) => t.dropIndex(['tenant_id', 'mode']));
  for (const table of ['coupons', 'provider_connections', 'sync_events']) {
    await knex.schema.alterTable(table, (t) => t.dropIndex(['tenant_id', 'created_at']));
  }
}
