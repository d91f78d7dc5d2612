import type { Knex } from 'knex';
import { LOGIN_ROLE } from '../login-role';
import { tenantTablePolicies } from './tenant-policies';

/**
 * Chart sums (docs/charts.md, "Where the time goes"): a chart reads per-day sums instead of
 * every history of the tenant. The worker's fold job (db/chart-fold.ts) computes each
 * subscription's facts with domain/charts/facts.ts and keeps:
 *
 * - `chart_day_sums`: per mode, provider, present product, country, UTC day, currency and
 *   product charged, the sum of the facts' figures (level changes, movements, counts, revenue);
 * - `chart_retention_sums`: per cohort month and month, cohort sizes and retained-run changes;
 * - `chart_ltv_sums`: per customer cohort day and currency;
 *
 * each for the eight ways to filter: a dimension a filter leaves out is '*' (and `pattern` says
 * which are kept), so a chart reads only its filter's rows, days × currencies of them, however
 * many providers, products and countries the tenant has;
 * - `chart_subscription_facts` / `chart_customer_facts`: the history each subscription's facts
 *   were computed from and when (epoch ms), and when a customer's were: the facts are a pure
 *   function of them and the catalogue (a catalogue change builds everything again), so a new
 *   version replaces exactly what the old one added; and when a subscription's facts next change
 *   with time alone (`due`: its next implied charge);
 * - `chart_pending`: the subscriptions written since the last fold, one row per write, filled by
 *   triggers in the writer's transaction whoever writes (a null subscription: the catalogue
 *   changed, every subscription is counted again); the fold takes the rows it saw;
 * - `chart_fold_state`: when the tenant's sums were last folded.
 *
 * `exchange_rates`: the rates a tenant provides for showing a chart in one currency.
 *
 * Text dimensions use '' for "not known", so a key is a plain unique index. Existing tenants
 * with subscriptions get a pending row: the first fold builds their sums.
 */
export const CHART_SUM_TENANT_TABLES = [
  'chart_day_sums',
  'chart_retention_sums',
  'chart_ltv_sums',
  'chart_subscription_facts',
  'chart_customer_facts',
  'chart_pending',
  'chart_fold_state',
  'exchange_rates',
] as const;

export const DAY_SUM_COLUMNS = [
  'paying',
  'priced',
  'trialing',
  'mrr12',
  'new12',
  'expansion12',
  'contraction12',
  'churned12',
  'reactivated12',
  'churned',
  'trials',
  'converted',
  'refunds',
  'charges',
  'revenue',
  'items',
] as const;

// The vocabularies spelled out (a migration is frozen history; test/db/vocabulary.test.ts compares them).
const MODE = `mode text not null check (mode in ('live','test'))`;
const PROVIDER_CHECK = `provider in ('psp_a','psp_b','psp_c','store_android','store_ios')`;
// In the sums a provider may be '*' (every provider), so that column is not the provider vocabulary.
const DIMS = `${MODE}, provider_key text not null, product text not null, country text not null`;
// Which of provider (1), product (2) and country (4) a row keeps; the others are '*' (every value).
const PATTERN = 'pattern smallint not null';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`create table chart_day_sums (
    tenant_id uuid not null references tenants (id) on delete cascade, ${PATTERN}, ${DIMS},
    day date not null, currency text not null, charged text not null,
    ${DAY_SUM_COLUMNS.map((c) => `${c} bigint not null default 0`).join(', ')})`);
  await knex.raw(`create unique index chart_day_sums_key on chart_day_sums
    (tenant_id, mode, pattern, provider_key, product, country, day, currency, charged)`);

  await knex.raw(`create table chart_retention_sums (
    tenant_id uuid not null references tenants (id) on delete cascade, ${PATTERN}, ${DIMS},
    cohort date not null, month date not null, size bigint not null default 0, retained bigint not null default 0)`);
  await knex.raw(`create unique index chart_retention_sums_key on chart_retention_sums
    (tenant_id, mode, pattern, provider_key, product, country, cohort, month)`);

  await knex.raw(`create table chart_ltv_sums (
    tenant_id uuid not null references tenants (id) on delete cascade, ${DIMS},
    day date not null, currency text not null,
    customers bigint not null default 0, revenue bigint not null default 0, items bigint not null default 0)`);
  await knex.raw(`create unique index chart_ltv_sums_key on chart_ltv_sums
    (tenant_id, mode, provider_key, product, country, day, currency)`);

  await knex.raw(`create table chart_subscription_facts (
    tenant_id uuid not null references tenants (id) on delete cascade,
    subscription_id uuid not null, ${MODE}, provider text not null check (${PROVIDER_CHECK}),
    product text not null, country text not null, customer text not null,
    history jsonb not null, computed_at bigint not null, due timestamptz,
    primary key (tenant_id, subscription_id))`);
  await knex.raw('create index chart_subscription_facts_customer on chart_subscription_facts (tenant_id, customer)');
  await knex.raw('create index chart_subscription_facts_due on chart_subscription_facts (due) where due is not null');

  await knex.raw(`create table chart_customer_facts (
    tenant_id uuid not null references tenants (id) on delete cascade,
    customer text not null, computed_at bigint not null,
    primary key (tenant_id, customer))`);

  await knex.raw(`create table chart_pending (
    tenant_id uuid not null references tenants (id) on delete cascade,
    subscription_id uuid)`);
  await knex.raw('create index chart_pending_tenant on chart_pending (tenant_id)');

  await knex.raw(`create table chart_fold_state (
    tenant_id uuid primary key references tenants (id) on delete cascade,
    folded_at timestamptz not null)`);

  await knex.raw(`create table exchange_rates (
    tenant_id uuid not null references tenants (id) on delete cascade,
    from_currency text not null constraint exchange_rates_from_check check (from_currency ~ '^[A-Z]{3}$'),
    to_currency text not null constraint exchange_rates_to_check check (to_currency ~ '^[A-Z]{3}$'),
    valid_from date not null,
    rate numeric not null constraint exchange_rates_rate_check check (rate > 0),
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now(),
    primary key (tenant_id, from_currency, to_currency, valid_from),
    constraint exchange_rates_pair_check check (from_currency <> to_currency))`);

  for (const table of CHART_SUM_TENANT_TABLES) await tenantTablePolicies(knex, table);

  // A delete that is part of its tenant's deletion adds nothing (the sums go by the cascade).
  const tenantGoing = `tg_op = 'DELETE' and not exists (select 1 from tenants where id = old.tenant_id)`;
  await knex.raw(`create function chart_mark_subscription() returns trigger language plpgsql as $$
    begin
      if ${tenantGoing} then return null; end if;
      insert into chart_pending (tenant_id, subscription_id)
      select coalesce(new.tenant_id, old.tenant_id), coalesce(new.subscription_id, old.subscription_id);
      return null;
    end $$`);
  await knex.raw(`create function chart_mark_subscription_row() returns trigger language plpgsql as $$
    begin
      if ${tenantGoing} then return null; end if;
      insert into chart_pending (tenant_id, subscription_id)
      select coalesce(new.tenant_id, old.tenant_id), coalesce(new.id, old.id);
      return null;
    end $$`);
  await knex.raw(`create function chart_mark_catalogue() returns trigger language plpgsql as $$
    begin
      if ${tenantGoing} then return null; end if;
      insert into chart_pending (tenant_id, subscription_id) select coalesce(new.tenant_id, old.tenant_id), null;
      return null;
    end $$`);
  // subscriptions: what a chart files a record by (status and product moves also write their history rows).
  await knex.raw(`create trigger chart_mark_subscription after insert or delete on subscriptions
    for each row execute function chart_mark_subscription_row()`);
  await knex.raw(`create trigger chart_mark_subscription_update after update of mode, provider, product_id, country, app_user_id, status on subscriptions
    for each row when ((old.mode, old.provider, old.product_id, old.country, old.app_user_id, old.status)
      is distinct from (new.mode, new.provider, new.product_id, new.country, new.app_user_id, new.status))
    execute function chart_mark_subscription_row()`);
  for (const history of ['subscription_changes', 'subscription_product_changes'])
    await knex.raw(`create trigger chart_mark_${history} after insert or update or delete on ${history}
      for each row execute function chart_mark_subscription()`);
  await knex.raw(`create trigger chart_mark_product after insert or delete or update of tier on products
    for each row execute function chart_mark_catalogue()`);
  await knex.raw(`create trigger chart_mark_price after insert or delete or update on prices
    for each row execute function chart_mark_catalogue()`);

  // The fold job's list of tenants to fold: ids only (no figure), as the owner, for the login role.
  const schema = (await knex.raw('select current_schema() as s')).rows[0].s as string;
  const path = `set search_path = "${schema.replace(/"/g, '""')}", pg_temp`;
  await knex.raw(`create function chart_folds_due() returns setof uuid
    language sql stable security definer ${path} as $fn$
      select tenant_id from chart_pending
      union
      select tenant_id from chart_subscription_facts where due is not null and due <= now()
    $fn$`);
  await knex.raw('revoke execute on function chart_folds_due() from public');
  await knex.raw(`grant execute on function chart_folds_due() to ${LOGIN_ROLE}`);

  await knex.raw(
    'insert into chart_pending (tenant_id, subscription_id) select distinct tenant_id, null::uuid from subscriptions',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop function if exists chart_folds_due()');
  await knex.raw('drop trigger if exists chart_mark_price on prices');
  await knex.raw('drop trigger if exists chart_mark_product on products');
  await knex.raw('drop trigger if exists chart_mark_subscription_product_changes on subscription_product_changes');
  await knex.raw('drop trigger if exists chart_mark_subscription_changes on subscription_changes');
  await knex.raw('drop trigger if exists chart_mark_subscription_update on subscriptions');
  await knex.raw('drop trigger if exists chart_mark_subscription on subscriptions');
  await knex.raw('drop function if exists chart_mark_catalogue()');
  await knex.raw('drop function if exists chart_mark_subscription_row()');
  await knex.raw('drop function if exists chart_mark_subscription()');
  for (const table of [...CHART_SUM_TENANT_TABLES].reverse()) await knex.schema.dropTableIfExists(table);
}
