import type { Knex } from 'knex';
import { tenantTablePolicies } from './tenant-policies';

/**
 * `transfer_refusals`: a web provider's purchase whose events named another app user than its
 * holder, and the policy refused the move (docs/transfers.md, "Web purchases re-linked"). One row
 * per refusal decision — the purchase, its holder, the app user named, the policy then — so
 * `billing_transfers_total{outcome="refused"}` counts the decision once, however often the
 * provider's later events repeat the name (every renewal does).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`create table transfer_refusals (
    tenant_id uuid not null references tenants (id) on delete cascade,
    provider text not null check (provider in ('psp_a', 'psp_b', 'psp_c', 'store_android', 'store_ios')),
    token_hash text not null,
    from_app_user_id text not null,
    to_app_user_id text not null,
    policy text not null check (policy in ('keep_with_original', 'transfer', 'review')),
    created_at timestamptz not null default now(),
    primary key (tenant_id, provider, token_hash, from_app_user_id, to_app_user_id)
  )`);
  await tenantTablePolicies(knex, 'transfer_refusals');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table if exists transfer_refusals');
}
