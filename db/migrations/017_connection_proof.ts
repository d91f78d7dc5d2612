import type { Knex } from 'knex';
import { LOGIN_ROLE } from '../login-role';

/**
 * A provider account routes events only once a connection has proven it owns it
 * (docs/providers.md, "Proving an account"). `verified_at` / `verified_by` say when and how
 * (`oauth`: the provider's consent screen named the account; `provider_call`: an authenticated
 * call with the tenant's own credentials for that account succeeded; `control_api`: an
 * emulator's control API created the account for the caller — the demo seed and fixtures).
 * `proof_checked_at` / `proof_error` keep the last attempt's outcome for the dashboard.
 *
 * The global `unique (provider, account_ref)` let whoever typed an account id first hold it
 * (and told the real owner "already connected"). It becomes: one *proven* connection per
 * account across tenants, and one connection per account within a tenant. Unproven claims by
 * other tenants neither block nor reveal anything.
 *
 * The receiver's routing query reads `verified_at` as the login role (migration 015), so that
 * column is granted to it; the proof's reason and method stay tenant-only.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`alter table provider_connections
      add column if not exists verified_at timestamptz,
      add column if not exists verified_by text check (verified_by in ('oauth', 'provider_call', 'control_api')),
      add column if not exists proof_checked_at timestamptz,
      add column if not exists proof_error text,
      add constraint provider_connections_verified_by_set check ((verified_at is null) = (verified_by is null))`);
  // Connections made before proofs existed already route events; they keep doing so.
  await knex.raw(
    `update provider_connections set verified_at = created_at, verified_by = 'provider_call' where verified_at is null`,
  );
  await knex.raw(
    'alter table provider_connections drop constraint if exists provider_connections_provider_account_ref_unique',
  );
  await knex.raw(`create unique index provider_connections_one_proven_owner
      on provider_connections (provider, account_ref) where verified_at is not null`);
  await knex.raw(`create unique index provider_connections_account_per_tenant
      on provider_connections (tenant_id, provider, account_ref)`);
  await knex.raw(`grant select (verified_at) on provider_connections to ${LOGIN_ROLE}`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`revoke select (verified_at) on provider_connections from ${LOGIN_ROLE}`);
  await knex.raw('drop index if exists provider_connections_account_per_tenant');
  await knex.raw('drop index if exists provider_connections_one_proven_owner');
  await knex.raw('delete from provider_connections where verified_at is null');
  await knex.raw(
    'alter table provider_connections add constraint provider_connections_provider_account_ref_unique unique (provider, account_ref)',
  );
  await knex.raw(`alter table provider_connections drop constraint if exists provider_connections_verified_by_set,
      drop column if exists proof_error, drop column if exists proof_checked_at,
      drop column if exists verified_by, drop column if exists verified_at`);
}
