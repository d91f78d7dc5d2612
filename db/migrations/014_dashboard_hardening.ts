import type { Knex } from 'knex';

/**
 * Dashboard hardening (issue #18). A new secret key is shown once after post/redirect/get:
 * between the POST that mints it and the GET that shows it, it waits on the session row,
 * encrypted under a key derived from the session cookie (so the table alone cannot reveal
 * it), and the GET takes it off in the same statement that reads it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('dashboard_sessions', (t) => {
    t.text('pending_secret');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('dashboard_sessions', (t) => {
    t.dropColumn('pending_secret');
  });
}
