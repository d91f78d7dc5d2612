import type { Knex } from 'knex';

/**
 * Dashboard tables. Failed dashboard logins, counted per key ("email:<sha256>" or "ip:<address>") in a fixed
 * window. In Postgres, not process memory, so every replica sees the same count. Not a tenant
 * table: a login attempt happens before anyone is known to belong to a tenant, and the key is a
 * hash, so no address is stored in the clear.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('dashboard_login_attempts', (t) => {
    t.text('key').primary();
    t.integer('failures').notNullable().defaultTo(0);
    t.timestamp('window_started_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  // What GET /v1/paywall serves: the config as of its last publication (the draft is `config`).
  await knex.schema.alterTable('paywalls', (t) => {
    t.jsonb('published_config');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('paywalls', (t) => {
    t.dropColumn('published_config');
  });
  await knex.schema.dropTable('dashboard_login_attempts');
}
