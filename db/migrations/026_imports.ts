import type { Knex } from 'knex';
import { tenantTablePolicies } from './tenant-policies';

/**
 * Imports (docs/reconciliation.md): bringing a provider's existing subscribers in.
 *
 * - `imports`: one run, its status and progress (pages read, the provider's cursor of the next
 *   page). The connection is the provider's default one when the import starts (in the
 *   workflow's input). The workflow keeps the cursor in its own state too; the row is what
 *   `GET /v1/imports/{id}` and the dashboard read.
 * - `import_items`: one row per line of an uploaded file, or per subscription a provider listed.
 *   A file's lines are stored here when the import is created and read back by the activity a
 *   page at a time, so no row crosses a workflow history (a Play purchase token is sealed by the
 *   vault, like every stored token). Each row's outcome (`imported`, or `refused` with the
 *   reason) is written once it is known; counts are read from the rows, so a retried page never
 *   counts twice.
 */
export const IMPORT_TENANT_TABLES = ['imports', 'import_items'] as const;

// The vocabularies spelled out (a migration is frozen history; test/db/vocabulary.test.ts compares them).
const PROVIDER_CHECK = `provider in ('psp_a','psp_b','psp_c','store_android','store_ios')`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`create table imports (
    id uuid primary key default gen_random_uuid(),
    tenant_id uuid not null references tenants (id) on delete cascade,
    provider text constraint imports_provider_check check (${PROVIDER_CHECK}),
    -- A RevenueCat export names several stores: its items carry their provider, the import none.
    source text not null constraint imports_source_check check (source in ('provider_api', 'file', 'revenuecat')),
    status text not null default 'running' constraint imports_status_check check (status in ('running', 'succeeded', 'failed')),
    pages integer not null default 0,
    next_cursor text,
    failure text,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now(),
    finished_at timestamptz
  )`);
  await knex.raw('create index imports_tenant_created on imports (tenant_id, created_at desc, id)');
  await knex.raw(`create table import_items (
    tenant_id uuid not null references tenants (id) on delete cascade,
    import_id uuid not null references imports (id) on delete cascade,
    line integer not null,
    provider text not null constraint import_items_provider_check check (${PROVIDER_CHECK}),
    ref text not null,
    sealed text,
    app_user_id text,
    outcome text constraint import_items_outcome_check check (outcome in ('imported', 'refused')),
    reason text,
    primary key (import_id, line)
  )`);
  // A customer's page reads the imported lines that name them (db/customers.ts).
  await knex.raw('create index import_items_tenant_user on import_items (tenant_id, app_user_id)');
  for (const table of IMPORT_TENANT_TABLES) await tenantTablePolicies(knex, table);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table if exists import_items');
  await knex.raw('drop table if exists imports');
}
