import type { Knex } from 'knex';
import { APP_ROLE } from '../tenant-tx';

/**
 * The policies every tenant table has (001_schema set the rule): row-level security forced,
 * the app role sees and writes its tenant's rows only, and the owner, the system actor (key
 * lookup, webhook routing, admin CLI), is the one deliberate exception. Each migration that
 * makes a tenant table calls this, so the rule is written once.
 */
export async function tenantTablePolicies(knex: Knex, table: string): Promise<void> {
  await knex.raw(`alter table ${table} enable row level security`);
  await knex.raw(`alter table ${table} force row level security`);
  await knex.raw(`create policy ${table}_tenant on ${table} to ${APP_ROLE}
      using (tenant_id = nullif(current_setting('app.tenant_id', true), '')::uuid)
      with check (tenant_id = nullif(current_setting('app.tenant_id', true), '')::uuid)`);
  await knex.raw(`grant select, insert, update, delete on ${table} to ${APP_ROLE}`);
  await knex.raw(
    `do $$ begin execute format('create policy ${table}_system on ${table} to %I using (true) with check (true)', current_user); end $$`,
  );
}
