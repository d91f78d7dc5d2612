import type { Knex } from 'knex';
import { tenantTablePolicies } from './tenant-policies';

/**
 * What the charts need beyond the status history of migration 019 (docs/charts.md):
 *
 * - `subscription_product_changes`: every product a subscription record is on, from its first
 *   one, written by a trigger on `subscriptions` whoever writes (like the status history), so an
 *   upgrade or a downgrade while paying is seen as expansion or contraction. Kept apart from
 *   the status history so every figure counted from that one stays as it is.
 * - `subscriptions.country`: the buyer's country (ISO 3166-1 alpha-2) when a provider says it;
 *   null is unknown. It picks the price a subscription pays and groups revenue by country.
 * - `subscription_changes_history (tenant_id, mode, subscription_id, changed_at) include
 *   (to_status)`: a chart reads every history of a mode in subscription order from the index.
 *
 * Existing records get one product row each (their present product at their creation): history
 * before this migration is not known.
 */
export const PRODUCT_CHANGE_TENANT_TABLES = ['subscription_product_changes'] as const;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`alter table subscriptions add column country text
    constraint subscriptions_country_check check (country ~ '^[A-Z]{2}$')`);

  await knex.raw(`create table subscription_product_changes (
    id uuid primary key default gen_random_uuid(),
    tenant_id uuid not null references tenants (id) on delete cascade,
    subscription_id uuid not null references subscriptions (id) on delete cascade,
    product_id uuid,
    changed_at timestamptz not null default now())`);
  await knex.raw(
    'create index subscription_product_changes_history on subscription_product_changes (tenant_id, subscription_id, changed_at) include (product_id)',
  );
  await knex.raw(
    'create index subscription_changes_history on subscription_changes (tenant_id, mode, subscription_id, changed_at) include (to_status)',
  );
  await tenantTablePolicies(knex, 'subscription_product_changes');

  await knex.raw(`create function record_subscription_product() returns trigger language plpgsql as $$
    begin
      insert into subscription_product_changes (tenant_id, subscription_id, product_id)
      values (new.tenant_id, new.id, new.product_id);
      return null;
    end $$`);
  await knex.raw(`create trigger subscriptions_record_product after insert on subscriptions
    for each row execute function record_subscription_product()`);
  // The web lifecycle's upsert sets product_id on every event: only a real change is a row.
  await knex.raw(`create trigger subscriptions_record_product_update after update of product_id on subscriptions
    for each row when (old.product_id is distinct from new.product_id) execute function record_subscription_product()`);

  await knex.raw(`insert into subscription_product_changes (tenant_id, subscription_id, product_id, changed_at)
    select tenant_id, id, product_id, created_at from subscriptions`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop trigger if exists subscriptions_record_product_update on subscriptions');
  await knex.raw('drop trigger if exists subscriptions_record_product on subscriptions');
  await knex.raw('drop function if exists record_subscription_product()');
  await knex.raw('drop index if exists subscription_changes_history');
  await knex.schema.dropTableIfExists('subscription_product_changes');
  await knex.raw('alter table subscriptions drop column if exists country');
}
