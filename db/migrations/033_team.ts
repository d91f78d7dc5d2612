import type { Knex } from 'knex';
import { LOGIN_ROLE } from '../login-role';
import { APP_ROLE } from '../tenant-tx';
import { tenantTablePolicies } from './tenant-policies';

/**
 * Team and roles (docs/team.md). A person still belongs to one tenant (their `dashboard_users`
 * row); the row now carries their role, and a removed member keeps their row (`removed_at`) so
 * the audit trail still names who did what, while their sessions are deleted.
 *
 * `team_invitations`: an owner's or admin's invitation of an email address to a role. Only the
 * SHA-256 of the link's token is stored; the link is shown once. It is accepted at most once
 * (`accepted_at`) and not after `expires_at`.
 *
 * Accepting happens before the visitor belongs to any tenant, and the login role may not read
 * the invitations: `team_invitation_tenant(hash)` (SECURITY DEFINER) answers only the tenant of
 * a live invitation with that hash, so the accept flow can open that tenant's transaction.
 */
export const TEAM_TENANT_TABLES = ['team_invitations'] as const;

export async function up(knex: Knex): Promise<void> {
  const schema = (await knex.raw('select current_schema() as s')).rows[0].s as string;
  const path = `set search_path = "${schema.replace(/"/g, '""')}", pg_temp`;

  await knex.schema.alterTable('dashboard_users', (t) => {
    t.text('role').notNullable().defaultTo('owner');
    t.timestamp('removed_at', { useTz: true });
  });
  await knex.raw(
    `alter table dashboard_users add constraint dashboard_users_role_check check (role in ('owner', 'admin', 'developer', 'support', 'viewer'))`,
  );
  await knex.raw(`grant select (role, removed_at) on dashboard_users to ${LOGIN_ROLE}`);

  await knex.schema.createTable('team_invitations', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.text('email').notNullable();
    t.text('role').notNullable();
    t.text('token_hash').notNullable().unique();
    t.uuid('invited_by').references('dashboard_users.id').onDelete('SET NULL');
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('accepted_at', { useTz: true });
    t.uuid('accepted_by').references('dashboard_users.id').onDelete('SET NULL');
    t.timestamp('revoked_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['tenant_id', 'created_at']);
  });
  await knex.raw(
    `alter table team_invitations add constraint team_invitations_role_check check (role in ('owner', 'admin', 'developer', 'support', 'viewer'))`,
  );
  await tenantTablePolicies(knex, 'team_invitations');

  await knex.raw(`create function team_invitation_tenant(p_hash text) returns uuid
    language sql stable security definer ${path} as $fn$
      select i.tenant_id from team_invitations i
       where i.token_hash = p_hash and i.accepted_at is null and i.revoked_at is null and i.expires_at > now()
    $fn$`);
  await knex.raw('revoke execute on function team_invitation_tenant(text) from public');
  await knex.raw(`grant execute on function team_invitation_tenant(text) to ${LOGIN_ROLE}, ${APP_ROLE}`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop function if exists team_invitation_tenant(text)');
  await knex.schema.dropTableIfExists('team_invitations');
  await knex.raw(`revoke select (role, removed_at) on dashboard_users from ${LOGIN_ROLE}`);
  await knex.schema.alterTable('dashboard_users', (t) => {
    t.dropColumn('removed_at');
    t.dropColumn('role');
  });
}
