import type { Knex } from 'knex';
import { tenantTablePolicies } from './tenant-policies';

/**
 * Restores that move a purchase between app users (docs/transfers.md):
 *
 * - `transfer_settings`: a tenant's restore policy (`restore_behavior`) and how long a completed
 *   transfer can be undone (`undo_hours`, 0–720); no row: the defaults (keep with the original, 72).
 * - `transfers`: one row per transfer of one store purchase (provider and token hash, as the
 *   purchase's claim in `store_purchase_tokens` names it) from one app user to another, with its
 *   status, who decided, its undo window and `moved`: what the move changed (the ids of the rows
 *   it re-pointed and the rows it displaced), so an undo puts both sides back exactly. At most one
 *   pending transfer per purchase.
 */
export const TRANSFER_TENANT_TABLES = ['transfer_settings', 'transfers'] as const;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`create table transfer_settings (
    tenant_id uuid primary key references tenants (id) on delete cascade,
    restore_behavior text not null default 'keep_with_original'
      check (restore_behavior in ('keep_with_original', 'transfer', 'review')),
    undo_hours numeric not null default 72 check (undo_hours >= 0 and undo_hours <= 720),
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now()
  )`);
  await knex.raw(`create table transfers (
    id uuid primary key default gen_random_uuid(),
    tenant_id uuid not null references tenants (id) on delete cascade,
    status text not null check (status in ('pending', 'completed', 'rejected', 'undone')),
    policy text not null check (policy in ('transfer', 'review')),
    provider text not null check (provider in ('psp_a', 'psp_b', 'psp_c', 'store_android', 'store_ios')),
    token_hash text not null,
    purchase_key text not null,
    from_app_user_id text not null,
    to_app_user_id text not null,
    is_sandbox boolean not null default false,
    moved jsonb not null default '{}'::jsonb,
    created_at timestamptz not null default now(),
    completed_at timestamptz,
    decided_at timestamptz,
    decided_by text,
    undo_until timestamptz,
    window_closed_at timestamptz,
    undone_at timestamptz,
    undone_by text,
    updated_at timestamptz not null default now(),
    check (from_app_user_id <> to_app_user_id)
  )`);
  await knex.raw(
    `create unique index transfers_one_pending on transfers (tenant_id, provider, token_hash) where status = 'pending'`,
  );
  await knex.raw('create index transfers_list on transfers (tenant_id, created_at desc, id desc)');
  await knex.raw('create index transfers_from on transfers (tenant_id, from_app_user_id)');
  await knex.raw('create index transfers_to on transfers (tenant_id, to_app_user_id)');
  for (const table of TRANSFER_TENANT_TABLES) await tenantTablePolicies(knex, table);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table if exists transfers');
  await knex.raw('drop table if exists transfer_settings');
}
