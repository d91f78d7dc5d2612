import type { Knex } from 'knex';
import { tenantTablePolicies } from './tenant-policies';

/**
 * Reconciliation repairs (docs/reconciliation.md): one row per subscription whose provider state
 * differed from what the service held, written by the run that found it. `held` and
 * `provider_state` carry only states and dates (no email, no name); `applied` names the
 * lifecycle events handed to the customer's workflow.
 */
export const RECONCILIATION_TENANT_TABLES = ['reconciliations'] as const;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`create table reconciliations (
    id uuid primary key default gen_random_uuid(),
    tenant_id uuid not null references tenants (id) on delete cascade,
    run_id uuid not null,
    provider text not null constraint reconciliations_provider_check
      check (provider in ('psp_a','psp_b','psp_c','store_android','store_ios')),
    subscription_external_id text not null,
    app_user_id text,
    held jsonb,
    provider_state jsonb not null,
    applied jsonb not null,
    created_at timestamptz not null default now()
  )`);
  await knex.raw('create index reconciliations_tenant_created on reconciliations (tenant_id, created_at desc, id)');
  await knex.raw('create index reconciliations_tenant_run on reconciliations (tenant_id, run_id)');
  // A customer's page reads their repairs (db/customers.ts).
  await knex.raw('create index reconciliations_tenant_user on reconciliations (tenant_id, app_user_id)');
  for (const table of RECONCILIATION_TENANT_TABLES) await tenantTablePolicies(knex, table);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table if exists reconciliations');
}
