import type { Knex } from 'knex';
import { tenantTablePolicies } from './tenant-policies';

/**
 * Rollups for the dashboard's overview (docs/dashboard.md, "Overview"; bench/overview.ts): the
 * "now" counts and the daily series read a few hundred rows per page view instead of every
 * subscription, entitlement and change of the tenant (100,000 subscriptions: ~40,000 changes
 * in 90 days and 90,000 index entries per count, each page view).
 *
 * Three tables, each the sum of its base rows per key:
 * - `overview_subscription_counts` (mode, provider, status, product_id) ← `subscriptions`;
 * - `overview_entitlement_counts` (is_sandbox, provider, state) ← `entitlements`;
 * - `overview_change_days` (mode, provider, UTC day: the change count and each series'
 *   figure) ← `subscription_changes`.
 *
 * Append-only deltas, folded on read: a trigger on each base table inserts the row's
 * contribution (+1 for the new key, −1 for the old one) in the writer's own transaction, so the
 * sum over a key is always exactly the base rows' figure. Writers never update a rollup row:
 * no row lock is shared between two webhook transactions, no lock order to deadlock on. The
 * reader (db/overview-rollups.ts) folds a key's deltas into one row once enough have piled up.
 * Cost per write: nothing when none of the key's columns changes (the trigger's WHEN is false);
 * else one insert of one or two narrow rows with one index entry each.
 *
 * The triggers run as the writer (the tenant's app role), so RLS checks their inserts as it
 * checks the write's. A row deleted because its tenant is being deleted adds no delta: the
 * tenant's rollup rows go by the same cascade.
 *
 * Existing rows are backfilled here, folded, after the triggers exist: creating a trigger locks
 * its table against writes until this migration commits, so no write falls between the two.
 */
export const ROLLUP_TENANT_TABLES = [
  'overview_subscription_counts',
  'overview_entitlement_counts',
  'overview_change_days',
] as const;

// The vocabularies spelled out (a migration is frozen history; test/db/vocabulary.test.ts compares them).
const PROVIDER_CHECK = `provider in ('psp_a','psp_b','psp_c','store_android','store_ios')`;
const MODE_CHECK = `mode in ('live','test')`;

/**
 * A change row's contribution to its day, times `s` (1 or −1); the same figures db/overview.ts once counted from the
 * rows.
 */
const dayDelta = (r: string, s: string) => `
  ${r}.tenant_id, ${r}.mode, ${r}.provider, (${r}.changed_at at time zone 'UTC')::date, ${s},
  ${s} * (${r}.to_status = 'trialing' and ${r}.from_status is distinct from 'trialing')::int,
  ${s} * coalesce(${r}.from_status = 'trialing' and ${r}.to_status = 'active', false)::int,
  ${s} * (${r}.to_status = 'canceled')::int,
  ${s} * (${r}.to_status = 'refunded')::int,
  ${s} * ((${r}.to_status = 'active')::int - coalesce(${r}.from_status = 'active', false)::int)`;
const DAY_COLUMNS =
  'tenant_id, mode, provider, day, changes, new_trials, conversions, cancellations, refunds, active_delta';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`create table overview_subscription_counts (
    tenant_id uuid not null references tenants (id) on delete cascade,
    mode text not null constraint overview_subscription_counts_mode_check check (${MODE_CHECK}),
    provider text not null constraint overview_subscription_counts_provider_check check (${PROVIDER_CHECK}),
    status text not null,
    product_id uuid,
    n bigint not null)`);
  await knex.raw(
    'create index overview_subscription_counts_key on overview_subscription_counts (tenant_id, mode, provider, status, product_id)',
  );
  await knex.raw(`create table overview_entitlement_counts (
    tenant_id uuid not null references tenants (id) on delete cascade,
    is_sandbox boolean not null,
    provider text not null constraint overview_entitlement_counts_provider_check check (${PROVIDER_CHECK}),
    state text not null,
    n bigint not null)`);
  await knex.raw(
    'create index overview_entitlement_counts_key on overview_entitlement_counts (tenant_id, is_sandbox, provider, state)',
  );
  await knex.raw(`create table overview_change_days (
    tenant_id uuid not null references tenants (id) on delete cascade,
    mode text not null constraint overview_change_days_mode_check check (${MODE_CHECK}),
    provider text not null constraint overview_change_days_provider_check check (${PROVIDER_CHECK}),
    day date not null,
    changes int not null,
    new_trials int not null,
    conversions int not null,
    cancellations int not null,
    refunds int not null,
    active_delta int not null)`);
  await knex.raw('create index overview_change_days_key on overview_change_days (tenant_id, mode, day, provider)');

  for (const table of ROLLUP_TENANT_TABLES) await tenantTablePolicies(knex, table);

  // A delete that is part of its tenant's deletion adds nothing (the rollup goes by the cascade; a delta would fail its
  // foreign key).
  const tenantGoing = `tg_op = 'DELETE' and not exists (select 1 from tenants where id = old.tenant_id)`;
  await knex.raw(`create function overview_count_subscription() returns trigger language plpgsql as $$
    begin
      if ${tenantGoing} then return null; end if;
      insert into overview_subscription_counts (tenant_id, mode, provider, status, product_id, n)
      select old.tenant_id, old.mode, old.provider, old.status, old.product_id, -1 where tg_op <> 'INSERT'
      union all
      select new.tenant_id, new.mode, new.provider, new.status, new.product_id, 1 where tg_op <> 'DELETE';
      return null;
    end $$`);
  await knex.raw(`create trigger overview_count_subscription after insert or delete on subscriptions
    for each row execute function overview_count_subscription()`);
  // The web lifecycle's upsert sets these columns on every event: only a real change adds deltas.
  await knex.raw(`create trigger overview_count_subscription_update after update of tenant_id, mode, provider, status, product_id on subscriptions
    for each row when ((old.tenant_id, old.mode, old.provider, old.status, old.product_id) is distinct from (new.tenant_id, new.mode, new.provider, new.status, new.product_id))
    execute function overview_count_subscription()`);

  await knex.raw(`create function overview_count_entitlement() returns trigger language plpgsql as $$
    begin
      if ${tenantGoing} then return null; end if;
      insert into overview_entitlement_counts (tenant_id, is_sandbox, provider, state, n)
      select old.tenant_id, old.is_sandbox, old.provider, old.state, -1 where tg_op <> 'INSERT'
      union all
      select new.tenant_id, new.is_sandbox, new.provider, new.state, 1 where tg_op <> 'DELETE';
      return null;
    end $$`);
  await knex.raw(`create trigger overview_count_entitlement after insert or delete on entitlements
    for each row execute function overview_count_entitlement()`);
  await knex.raw(`create trigger overview_count_entitlement_update after update of tenant_id, is_sandbox, provider, state on entitlements
    for each row when ((old.tenant_id, old.is_sandbox, old.provider, old.state) is distinct from (new.tenant_id, new.is_sandbox, new.provider, new.state))
    execute function overview_count_entitlement()`);

  await knex.raw(`create function overview_change_day() returns trigger language plpgsql as $$
    begin
      if ${tenantGoing} then return null; end if;
      insert into overview_change_days (${DAY_COLUMNS})
      select ${dayDelta('old', '-1')} where tg_op <> 'INSERT'
      union all
      select ${dayDelta('new', '1')} where tg_op <> 'DELETE';
      return null;
    end $$`);
  await knex.raw(`create trigger overview_change_day after insert or delete on subscription_changes
    for each row execute function overview_change_day()`);
  await knex.raw(`create trigger overview_change_day_update after update on subscription_changes
    for each row when ((old.tenant_id, old.mode, old.provider, old.from_status, old.to_status, old.changed_at)
      is distinct from (new.tenant_id, new.mode, new.provider, new.from_status, new.to_status, new.changed_at))
    execute function overview_change_day()`);

  // The backfill, already folded: one row per key.
  await knex.raw(`insert into overview_subscription_counts (tenant_id, mode, provider, status, product_id, n)
    select tenant_id, mode, provider, status, product_id, count(*) from subscriptions group by 1, 2, 3, 4, 5`);
  await knex.raw(`insert into overview_entitlement_counts (tenant_id, is_sandbox, provider, state, n)
    select tenant_id, is_sandbox, provider, state, count(*) from entitlements group by 1, 2, 3, 4`);
  await knex.raw(`insert into overview_change_days (${DAY_COLUMNS})
    select tenant_id, mode, provider, day, sum(changes), sum(new_trials), sum(conversions), sum(cancellations), sum(refunds), sum(active_delta)
      from (select ${dayDelta('c', '1')} from subscription_changes c) d (${DAY_COLUMNS})
     group by 1, 2, 3, 4`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop trigger if exists overview_count_subscription on subscriptions');
  await knex.raw('drop trigger if exists overview_count_subscription_update on subscriptions');
  await knex.raw('drop trigger if exists overview_count_entitlement on entitlements');
  await knex.raw('drop trigger if exists overview_count_entitlement_update on entitlements');
  await knex.raw('drop trigger if exists overview_change_day on subscription_changes');
  await knex.raw('drop trigger if exists overview_change_day_update on subscription_changes');
  for (const f of ['overview_count_subscription()', 'overview_count_entitlement()', 'overview_change_day()'])
    await knex.raw(`drop function if exists ${f}`);
  for (const t of ROLLUP_TENANT_TABLES) await knex.raw(`drop table if exists ${t}`);
}
