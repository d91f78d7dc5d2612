import type { Knex } from 'knex';
import { tenantTablePolicies } from './tenant-policies';

/**
 * Password guessing against one account (docs/limits.md, "Device cookies").
 *
 * - `dashboard_login_attempts` gains the growing back-off of the account-wide allowance
 *   (domain/login-limits.ts): `window_seconds`, how long the current window lasts (null: the
 *   limit's base, as every row before this migration); `streak`, the attempts taken since the
 *   last correct password; `last_failure_at`, when the last one was taken.
 * - `dashboard_sign_in_failures`: the wrong passwords checked against a member's account since
 *   their last successful log-in, counted per client address key (its SHA-256: no address is
 *   stored in the clear), so the next log-in can tell them how many and from how many addresses.
 *   A tenant table: written and read in the account's tenant transaction.
 * - `dashboard_sessions` keeps what that log-in found, shown on the overview for the session.
 */
export const SIGN_IN_FAILURE_TENANT_TABLES = ['dashboard_sign_in_failures'] as const;

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('dashboard_login_attempts', (t) => {
    t.integer('window_seconds');
    t.integer('streak').notNullable().defaultTo(0);
    t.timestamp('last_failure_at', { useTz: true });
  });
  await knex.schema.createTable('dashboard_sign_in_failures', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.uuid('user_id').notNullable().references('dashboard_users.id').onDelete('CASCADE');
    t.text('address_key_hash').notNullable();
    t.integer('failures').notNullable().defaultTo(0);
    t.timestamp('last_failed_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['user_id', 'address_key_hash']);
  });
  await tenantTablePolicies(knex, 'dashboard_sign_in_failures');
  await knex.schema.alterTable('dashboard_sessions', (t) => {
    t.integer('failed_sign_ins').notNullable().defaultTo(0);
    t.integer('failed_sign_in_addresses').notNullable().defaultTo(0);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('dashboard_sessions', (t) => {
    t.dropColumn('failed_sign_ins');
    t.dropColumn('failed_sign_in_addresses');
  });
  await knex.schema.dropTable('dashboard_sign_in_failures');
  await knex.schema.alterTable('dashboard_login_attempts', (t) => {
    t.dropColumn('window_seconds');
    t.dropColumn('streak');
    t.dropColumn('last_failure_at');
  });
}
