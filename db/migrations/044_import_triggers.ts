import type { Knex } from 'knex';

/**
 * What started an import (docs/reconciliation.md, "Import on proof"): `request` (REST, a tool,
 * the dashboard's button) or `connection_proven` (a web provider connection proved its account,
 * and its existing subscribers were brought in by themselves). `connection_id` names the
 * connection an import on proof read. At most one such import per connection: a re-proof (Verify
 * again, a new credential) does not import the account again; an import by request always may.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`alter table imports
    add column trigger text not null default 'request'
      constraint imports_trigger_check check (trigger in ('request', 'connection_proven')),
    add column connection_id uuid references provider_connections (id) on delete set null`);
  await knex.raw(
    `create unique index imports_once_on_proof on imports (tenant_id, connection_id) where trigger = 'connection_proven'`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists imports_once_on_proof');
  await knex.raw('alter table imports drop column if exists connection_id, drop column if exists trigger');
}
