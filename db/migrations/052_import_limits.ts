import type { Knex } from 'knex';
import { tenantTablePolicies } from './tenant-policies';

/**
 * Imports cannot stall the api or fill the worker (docs/limits.md, "Imports and reconciliation"):
 *
 * - `imports.file_sealed`: an uploaded file as the request received it, sealed by the vault
 *   (Play purchase tokens are bearer credentials), kept only until the import's activity has read
 *   its lines into `import_items`; the api process no longer reads a file line by line.
 * - At most one running import per tenant and provider (a RevenueCat export counts as its own
 *   provider): a unique index, so api replicas agree. Older running duplicates of an upgraded
 *   install end `failed` first (their workflows' writes only touch running imports).
 * - `tenant_work_leases`: the turns a tenant's imports and reconciliations hold in the worker's
 *   activity slots, a few per tenant across every worker process.
 */
export const WORK_LEASE_TENANT_TABLES = ['tenant_work_leases'] as const;

export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table imports add column file_sealed text');
  await knex.raw(`update imports i set status = 'failed', finished_at = now(),
      failure = 'Stopped: a newer import of the same provider was running.'
    where status = 'running' and exists (
      select 1 from imports n where n.tenant_id = i.tenant_id and n.status = 'running'
        and coalesce(n.provider, 'revenuecat') = coalesce(i.provider, 'revenuecat')
        and (n.created_at, n.id) > (i.created_at, i.id))`);
  await knex.raw(
    `create unique index imports_one_running on imports (tenant_id, (coalesce(provider, 'revenuecat'))) where status = 'running'`,
  );
  await knex.raw(`create table tenant_work_leases (
    tenant_id uuid not null references tenants (id) on delete cascade,
    holder text not null,
    lease_until timestamptz not null,
    primary key (tenant_id, holder)
  )`);
  for (const table of WORK_LEASE_TENANT_TABLES) await tenantTablePolicies(knex, table);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table if exists tenant_work_leases');
  await knex.raw('drop index if exists imports_one_running');
  await knex.raw('alter table imports drop column if exists file_sealed');
}
