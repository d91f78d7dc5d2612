import type { Knex } from 'knex';
import { tenantTablePolicies } from './tenant-policies';

/**
 * The history the dashboard's overview charts read (docs/dashboard.md, "Overview"):
 * `subscriptions` keeps only each record's present status, so "active subscriptions on
 * 3 October" or "trials that turned paid last week" had nothing to be counted from.
 *
 * A trigger on `subscriptions` writes one row per status a record takes (its first status on
 * insert, then every change), whichever path wrote it (the web lifecycle's upsert, the store
 * purchase paths, an operator): no writer can forget it, and no writer changes. `changed_at`
 * is when the service recorded the move. Rows are tenant rows under the same policy; the
 * trigger runs as the writer (the tenant's app role), so RLS checks its insert too.
 *
 * Existing records are backfilled with one row each (their present status at their
 * creation): history before this migration is not known, and the charts count from here.
 *
 * Indexes for the overview on a big tenant (bench/overview.ts, bench/RESULTS.md):
 * - `subscription_changes (tenant_id, mode, changed_at) include (provider, from_status,
 *   to_status)`: the daily series read only the changes inside their window, from the index
 *   alone;
 * - `subscriptions (tenant_id, mode, status, provider) include (product_id)`: the "now"
 *   counts and MRR read the index alone, not 100,000 heap rows;
 * - `entitlements (tenant_id, is_sandbox, provider, state)`: the entitlement counts and
 *   readiness's sandbox evidence, likewise.
 */
export const CHANGE_TENANT_TABLES = ['subscription_changes'] as const;

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('subscription_changes', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.uuid('subscription_id').notNullable().references('subscriptions.id').onDelete('CASCADE');
    t.text('provider').notNullable();
    t.text('mode').notNullable();
    t.text('from_status');
    t.text('to_status').notNullable();
    t.timestamp('changed_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  // The vocabularies of subscriptions' own columns, spelled out (a migration is frozen history;
  // test/db/vocabulary.test.ts compares them).
  await knex.raw(`alter table subscription_changes add constraint subscription_changes_provider_check
    check (provider in ('psp_a','psp_b','psp_c','store_android','store_ios'))`);
  await knex.raw(
    `alter table subscription_changes add constraint subscription_changes_mode_check check (mode in ('live','test'))`,
  );
  await knex.raw(
    'create index subscription_changes_window on subscription_changes (tenant_id, mode, changed_at) include (provider, from_status, to_status)',
  );
  await knex.raw('create index subscription_changes_subscription on subscription_changes (subscription_id)');
  await knex.raw(
    'create index subscriptions_overview on subscriptions (tenant_id, mode, status, provider) include (product_id)',
  );
  await knex.raw('create index entitlements_overview on entitlements (tenant_id, is_sandbox, provider, state)');

  await knex.raw(`create or replace function record_subscription_change() returns trigger language plpgsql as $$
    begin
      if tg_op = 'INSERT' or new.status is distinct from old.status then
        insert into subscription_changes (tenant_id, subscription_id, provider, mode, from_status, to_status)
        values (new.tenant_id, new.id, new.provider, new.mode, case when tg_op = 'UPDATE' then old.status end, new.status);
      end if;
      return null;
    end $$`);
  await knex.raw(`create trigger subscriptions_record_change after insert or update of status on subscriptions
    for each row execute function record_subscription_change()`);

  await knex.raw(`insert into subscription_changes (tenant_id, subscription_id, provider, mode, from_status, to_status, changed_at)
    select tenant_id, id, provider, mode, null, status, created_at from subscriptions`);

  await tenantTablePolicies(knex, 'subscription_changes');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop trigger if exists subscriptions_record_change on subscriptions');
  await knex.raw('drop function if exists record_subscription_change()');
  await knex.raw('drop index if exists subscriptions_overview');
  await knex.raw('drop index if exists entitlements_overview');
  await knex.schema.dropTableIfExists('subscription_changes');
}
