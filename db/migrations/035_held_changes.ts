import type { Knex } from 'knex';
import { LOGIN_ROLE } from '../login-role';
import { tenantTablePolicies } from './tenant-policies';

/**
 * Writes that wait for a person (docs/approvals.md).
 *
 * - `api_keys.require_approval`: every write made with the key is held for a person's approval
 *   instead of running.
 * - `held_changes`: one row per held write: the operation's name, its validated input (a key's
 *   input never holds a secret: secrets go in only in the dashboard), the key that asked, the
 *   plan a person reads before deciding (with the state it was planned against, so approval can
 *   tell whether it still applies), its status, who decided and when, and the outcome (ids and
 *   names only, never a whole answer: an answer may carry a secret shown once).
 */
export const HELD_CHANGE_TENANT_TABLES = ['held_changes'] as const;

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('api_keys', (t) => {
    t.boolean('require_approval').notNullable().defaultTo(false);
  });
  // The gate reads a key by its hash before any tenant is known (015_login_role): it needs the flag too.
  await knex.raw(`grant select (require_approval) on api_keys to ${LOGIN_ROLE}`);
  await knex.schema.createTable('held_changes', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.text('operation').notNullable();
    t.jsonb('input').notNullable();
    t.uuid('requested_by_key').notNullable().references('api_keys.id').onDelete('CASCADE');
    t.text('surface').notNullable();
    t.jsonb('plan').notNullable();
    t.text('status').notNullable().defaultTo('pending_approval');
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.uuid('decided_by_user');
    t.timestamp('decided_at', { useTz: true });
    t.jsonb('outcome');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  // Spelled out: a migration is frozen history (test/db/vocabulary.test.ts compares it with domain/changes.ts).
  await knex.raw(`alter table held_changes add constraint held_changes_status_check
    check (status in ('pending_approval', 'applied', 'rejected', 'expired', 'stale'))`);
  // The dashboard's list of what waits, newest first.
  await knex.raw(
    `create index held_changes_pending on held_changes (tenant_id, created_at desc) where status = 'pending_approval'`,
  );
  await knex.raw('create index held_changes_key on held_changes (requested_by_key)');
  for (const table of HELD_CHANGE_TENANT_TABLES) await tenantTablePolicies(knex, table);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('held_changes');
  await knex.raw(`revoke select (require_approval) on api_keys from ${LOGIN_ROLE}`);
  await knex.schema.alterTable('api_keys', (t) => t.dropColumn('require_approval'));
}
