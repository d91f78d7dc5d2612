import type { Knex } from 'knex';
import { LOGIN_ROLE } from '../login-role';
import { tenantTablePolicies } from './tenant-policies';

/**
 * Assistants sign in with a person's consent (docs/assistant-sign-in.md).
 *
 * - `oauth_records` (not a tenant table: a client registers, and a code or token is presented,
 *   before any tenant is known): the authorization server's records by kind (`model`: a client
 *   registration, an authorization code, an access or refresh token, a grant, an interaction),
 *   keyed by the SHA-256 of their id — a token's id is its value, so no token is stored in the
 *   clear. `grant_id` ties a person's consent to every code and token it gave (revoking one
 *   deletes them all); `consumed_at` makes a code single-use; `expires_at` bounds every row.
 * - `assistant_grants` (a tenant table): one row per consent a person gave an assistant — the
 *   client's name and redirect host as the person saw them, the role it was given (the person's
 *   or a narrower one), whether its writes wait for approval, its last use, its revocation.
 * - `held_changes` gains `requested_by_assistant`: a write an assistant asked for waits for a
 *   person like a key's (docs/approvals.md); exactly one of the key and the assistant asked.
 */

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('oauth_records', (t) => {
    t.text('model').notNullable();
    t.text('id_hash').notNullable();
    t.jsonb('payload').notNullable();
    t.text('grant_id');
    t.text('uid');
    t.timestamp('expires_at', { useTz: true });
    t.timestamp('consumed_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['model', 'id_hash']);
    t.index(['grant_id']);
    t.index(['expires_at']);
  });
  await knex.raw(`grant select, insert, update, delete on oauth_records to ${LOGIN_ROLE}`);

  await knex.schema.createTable('assistant_grants', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.uuid('user_id').notNullable().references('dashboard_users.id').onDelete('CASCADE');
    t.text('grant_id').notNullable().unique();
    t.text('client_id').notNullable();
    t.text('client_name').notNullable();
    t.text('redirect_host').notNullable();
    t.text('role').notNullable();
    t.boolean('hold_writes').notNullable().defaultTo(false);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('last_used_at', { useTz: true });
    t.timestamp('revoked_at', { useTz: true });
    t.index(['tenant_id', 'user_id']);
  });
  await tenantTablePolicies(knex, 'assistant_grants');

  await knex.schema.alterTable('held_changes', (t) => {
    t.uuid('requested_by_assistant').nullable().references('assistant_grants.id').onDelete('CASCADE');
    t.index(['requested_by_assistant']);
  });
  await knex.raw('alter table held_changes alter column requested_by_key drop not null');
  await knex.raw(
    'alter table held_changes add constraint held_changes_one_requester check (num_nonnulls(requested_by_key, requested_by_assistant) = 1)',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex('held_changes').whereNull('requested_by_key').del();
  await knex.raw('alter table held_changes drop constraint held_changes_one_requester');
  await knex.raw('alter table held_changes alter column requested_by_key set not null');
  await knex.schema.alterTable('held_changes', (t) => t.dropColumn('requested_by_assistant'));
  await knex.schema.dropTable('assistant_grants');
  await knex.schema.dropTable('oauth_records');
}
