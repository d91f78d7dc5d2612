import type { Knex } from 'knex';

/**
 * Who minted a secret key (docs/team.md, "Keys a member mints"): the person, for a key made in
 * the dashboard; null for the operator's (admin CLI, tenant creation). Removing a member can
 * then revoke the keys they minted. A removed member keeps their row, so the name stays
 * readable; a deleted one (sign-up undone) leaves the key the operator's.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('api_keys', (t) => {
    t.uuid('created_by_user_id').nullable().references('dashboard_users.id').onDelete('SET NULL');
    t.index(['tenant_id', 'created_by_user_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('api_keys', (t) => {
    t.dropIndex(['tenant_id', 'created_by_user_id']);
    t.dropColumn('created_by_user_id');
  });
}
