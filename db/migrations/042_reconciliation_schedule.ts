import type { Knex } from 'knex';
import { tenantTablePolicies } from './tenant-policies';

/**
 * The scheduled reconciliation (docs/reconciliation.md, "Scheduled"):
 * - `reconciliation_settings`: one row per tenant that changed the defaults (no row: enabled,
 *   hourly for web providers, daily for the stores); the Temporal Schedules follow it.
 * - `reconciliations.workflow_id`: the run that recorded a repair, when it is not the on-demand
 *   refresh (`refresh-<tenant>-<run>`): a scheduled run's id carries its scheduled time, so the
 *   customer's timeline names it from here.
 * - Indexes for a run's candidates: subscriptions changed recently, and those whose paid period
 *   ends near the run (grace and billing retry use `(tenant_id, status)`, failed deliveries
 *   `(tenant_id, provider, status)`, both from 001).
 */
export const RECONCILIATION_SCHEDULE_TENANT_TABLES = ['reconciliation_settings'] as const;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`create table reconciliation_settings (
    tenant_id uuid primary key references tenants (id) on delete cascade,
    enabled boolean not null default true,
    web_interval_minutes integer not null default 60
      constraint reconciliation_settings_web_check check (web_interval_minutes between 15 and 1440),
    stores_interval_minutes integer not null default 1440
      constraint reconciliation_settings_stores_check check (stores_interval_minutes between 60 and 10080),
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now()
  )`);
  for (const table of RECONCILIATION_SCHEDULE_TENANT_TABLES) await tenantTablePolicies(knex, table);
  await knex.raw('alter table reconciliations add column workflow_id text');
  await knex.raw('create index subscriptions_tenant_updated on subscriptions (tenant_id, updated_at)');
  await knex.raw(
    'create index subscriptions_tenant_period_end on subscriptions (tenant_id, current_period_end) where current_period_end is not null',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists subscriptions_tenant_period_end');
  await knex.raw('drop index if exists subscriptions_tenant_updated');
  await knex.raw('alter table reconciliations drop column if exists workflow_id');
  await knex.raw('drop table if exists reconciliation_settings');
}
