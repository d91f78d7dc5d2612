import type { Knex } from 'knex';
import { tenantTablePolicies } from './tenant-policies';
import { APP_ROLE } from '../tenant-tx';

/**
 * The whole data model of the spec. Every table that carries `tenant_id` is a
 * tenant table: RLS forced, policy on `app.tenant_id` (see TENANT_TABLES).
 */
export const TENANT_TABLES = [
  'dashboard_users',
  'dashboard_sessions',
  'api_keys',
  'apps',
  'provider_connections',
  'app_providers',
  'products',
  'product_provider_refs',
  'prices',
  'payment_links',
  'provider_plans',
  'coupons',
  'coupon_counterparts',
  'paywalls',
  'subscriptions',
  'entitlements',
  'webhook_deliveries',
  'audit_entries',
  'sync_runs',
  'sync_events',
  'store_purchase_tokens',
  'rate_limit_buckets',
] as const;

const PROVIDER_CHECK = `provider in ('psp_a','psp_b','psp_c','store_android','store_ios')`;
const MODE_CHECK = `mode in ('live','test')`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw('create extension if not exists pgcrypto');
  // Roles are cluster-wide and parallel test databases race to create it.
  await knex.raw(`do $$ begin
      if not exists (select 1 from pg_roles where rolname = '${APP_ROLE}') then
        create role ${APP_ROLE} nologin;
      end if;
    exception when duplicate_object or unique_violation then null;
    end $$`);
  await knex.raw(`do $$ begin execute format('grant ${APP_ROLE} to %I', current_user);
    exception when others then null; end $$`);

  const id = (t: Knex.CreateTableBuilder) => t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
  const tenant = (t: Knex.CreateTableBuilder) =>
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
  const stamps = (t: Knex.CreateTableBuilder) => {
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  };

  await knex.schema.createTable('tenants', (t) => {
    id(t);
    t.text('name').notNullable();
    t.text('plan').notNullable().defaultTo('free');
    t.integer('subscriber_limit').notNullable().defaultTo(1000);
    t.boolean('is_demo').notNullable().defaultTo(false);
    stamps(t);
  });
  await knex.raw('create unique index tenants_one_demo on tenants (is_demo) where is_demo');

  await knex.schema.createTable('dashboard_users', (t) => {
    id(t);
    tenant(t);
    t.text('email').notNullable().unique();
    t.text('password_hash').notNullable();
    stamps(t);
  });

  await knex.schema.createTable('dashboard_sessions', (t) => {
    id(t);
    tenant(t);
    t.uuid('user_id').notNullable().references('dashboard_users.id').onDelete('CASCADE');
    t.text('token_hash').notNullable().unique();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    stamps(t);
  });

  await knex.schema.createTable('api_keys', (t) => {
    id(t);
    tenant(t);
    t.text('name').notNullable().defaultTo('');
    t.text('key_hash').notNullable().unique(); // hex SHA-256 of the whole key
    t.text('key_hint').notNullable(); // "sk_…last4": enough to recognise, useless to attack
    t.specificType('scopes', 'text[]').notNullable();
    t.timestamp('expires_at', { useTz: true });
    t.timestamp('revoked_at', { useTz: true });
    t.timestamp('last_used_at', { useTz: true });
    stamps(t);
    t.index(['tenant_id']);
  });

  await knex.schema.createTable('apps', (t) => {
    id(t);
    tenant(t);
    t.text('name').notNullable();
    t.text('bundle_id');
    t.text('publishable_key_test').notNullable().unique();
    t.text('publishable_key_live').notNullable().unique();
    stamps(t);
    t.unique(['tenant_id', 'name']);
  });

  await knex.schema.createTable('provider_connections', (t) => {
    id(t);
    tenant(t);
    t.text('provider').notNullable().checkIn(['psp_a', 'psp_b', 'psp_c', 'store_android', 'store_ios']);
    t.text('account_ref').notNullable(); // the provider's connected-account id; routes inbound webhooks
    t.text('label').notNullable().defaultTo('');
    t.boolean('is_default').notNullable().defaultTo(false);
    t.boolean('is_active').notNullable().defaultTo(true);
    // AES-256-GCM envelopes ("v1:<keyver>:..."); never selected by API code.
    t.text('credential_test_enc');
    t.text('credential_live_enc');
    t.text('webhook_secret_enc');
    stamps(t);
    t.unique(['provider', 'account_ref']);
    t.index(['tenant_id', 'provider']);
  });
  // At most one default connection per provider per account, enforced by the database.
  await knex.raw(
    'create unique index provider_connections_one_default on provider_connections (tenant_id, provider) where is_default',
  );

  await knex.schema.createTable('app_providers', (t) => {
    id(t);
    tenant(t);
    t.uuid('app_id').notNullable().references('apps.id').onDelete('CASCADE');
    t.uuid('connection_id').notNullable().references('provider_connections.id').onDelete('CASCADE');
    t.text('provider').notNullable();
    stamps(t);
    t.unique(['app_id', 'provider']);
  });

  await knex.schema.createTable('products', (t) => {
    id(t);
    tenant(t);
    t.uuid('app_id').references('apps.id').onDelete('SET NULL');
    t.text('sku').notNullable();
    t.text('name').notNullable().defaultTo('');
    t.text('type').notNullable().defaultTo('subscription');
    t.text('kind').notNullable().defaultTo('digital').checkIn(['digital', 'physical']);
    t.text('tier').checkIn(['weekly', 'monthly', 'quarterly', 'annual']);
    t.text('android_store_product_id');
    t.text('ios_store_product_id');
    t.jsonb('trial_per_platform');
    t.boolean('active').notNullable().defaultTo(true);
    t.integer('version').notNullable().defaultTo(1); // bumped on every change; sync compares it
    t.timestamp('retired_at', { useTz: true });
    stamps(t);
    t.unique(['tenant_id', 'sku']);
    t.index(['tenant_id', 'type']);
    t.index(['tenant_id', 'created_at']);
  });

  await knex.schema.createTable('product_provider_refs', (t) => {
    id(t);
    tenant(t);
    t.uuid('product_id').notNullable().references('products.id').onDelete('CASCADE');
    t.text('provider').notNullable();
    t.text('mode').notNullable();
    t.text('external_id').notNullable();
    t.integer('synced_version').notNullable();
    t.timestamp('synced_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    stamps(t);
    t.unique(['product_id', 'provider', 'mode']);
  });

  await knex.schema.createTable('prices', (t) => {
    id(t);
    tenant(t);
    t.uuid('product_id').notNullable().references('products.id').onDelete('CASCADE');
    t.text('country').notNullable(); // ISO 3166-1 alpha-2
    t.text('currency').notNullable(); // ISO 4217
    t.bigInteger('amount_minor').notNullable();
    stamps(t);
    t.unique(['product_id', 'country', 'currency']);
  });

  for (const table of ['payment_links', 'provider_plans'] as const) {
    await knex.schema.createTable(table, (t) => {
      id(t);
      tenant(t);
      t.uuid('app_id').notNullable().references('apps.id').onDelete('CASCADE');
      t.uuid('product_id').notNullable().references('products.id').onDelete('CASCADE');
      t.uuid('connection_id').references('provider_connections.id').onDelete('SET NULL');
      t.text('provider').notNullable();
      t.text('mode').notNullable();
      t.text('external_id').notNullable();
      if (table === 'payment_links') t.text('url').notNullable();
      stamps(t);
      t.unique(['app_id', 'product_id', 'provider', 'mode']);
    });
  }

  await knex.schema.createTable('coupons', (t) => {
    id(t);
    tenant(t);
    t.text('code').notNullable();
    t.integer('percent_off');
    t.bigInteger('amount_off_minor');
    t.text('currency');
    t.text('duration').notNullable().defaultTo('once');
    t.boolean('active').notNullable().defaultTo(true);
    stamps(t);
    t.unique(['tenant_id', 'code']);
  });

  await knex.schema.createTable('coupon_counterparts', (t) => {
    id(t);
    tenant(t);
    t.uuid('coupon_id').notNullable().references('coupons.id').onDelete('CASCADE');
    t.text('provider').notNullable();
    t.text('kind').notNullable(); // coupon | discount | offer | offer_id
    t.text('external_id').notNullable();
    stamps(t);
    t.unique(['coupon_id', 'provider']);
  });

  await knex.schema.createTable('paywalls', (t) => {
    id(t);
    tenant(t);
    t.jsonb('config').notNullable();
    t.timestamp('published_at', { useTz: true });
    stamps(t);
    t.unique(['tenant_id']);
  });

  await knex.schema.createTable('subscriptions', (t) => {
    id(t);
    tenant(t);
    t.text('app_user_id');
    t.text('email');
    t.text('provider').notNullable();
    t.text('mode').notNullable();
    t.text('status').notNullable();
    t.uuid('product_id').references('products.id').onDelete('SET NULL');
    t.text('external_id').notNullable(); // the provider's subscription id
    t.text('customer_external_id');
    t.timestamp('trial_started_at', { useTz: true });
    t.timestamp('trial_ended_at', { useTz: true });
    t.timestamp('current_period_end', { useTz: true });
    t.timestamp('canceled_at', { useTz: true });
    stamps(t);
    t.unique(['tenant_id', 'provider', 'external_id']);
    t.index(['tenant_id', 'email']);
    t.index(['tenant_id', 'status']);
    t.index(['tenant_id', 'provider', 'mode']);
    t.index(['tenant_id', 'created_at']);
  });

  await knex.schema.createTable('entitlements', (t) => {
    id(t);
    tenant(t);
    t.text('app_user_id').notNullable();
    t.text('provider').notNullable();
    t.uuid('product_id').references('products.id').onDelete('SET NULL');
    t.uuid('subscription_id').references('subscriptions.id').onDelete('SET NULL');
    t.text('state').notNullable();
    t.boolean('is_sandbox').notNullable().defaultTo(false);
    t.timestamp('expires_at', { useTz: true });
    t.timestamp('grace_until', { useTz: true });
    stamps(t);
    t.index(['tenant_id', 'app_user_id']);
    t.index(['tenant_id', 'provider']);
    t.index(['tenant_id', 'state']);
    t.index(['tenant_id', 'created_at']);
  });
  await knex.raw(
    `create unique index entitlements_one_per_user_product on entitlements
       (tenant_id, app_user_id, provider, coalesce(product_id, '00000000-0000-0000-0000-000000000000'::uuid))`,
  );

  await knex.schema.createTable('webhook_deliveries', (t) => {
    id(t);
    // Null when the delivery could not be routed to a tenant (unknown account): kept for
    // operators, invisible to every tenant under RLS.
    t.uuid('tenant_id').references('tenants.id').onDelete('CASCADE');
    t.text('provider').notNullable();
    t.text('event_id').notNullable();
    t.text('event_type').notNullable();
    t.text('mode');
    t.text('status').notNullable().defaultTo('received');
    t.text('reason');
    t.jsonb('payload').notNullable(); // redacted before insert
    t.integer('delivery_count').notNullable().defaultTo(1);
    t.timestamp('processed_at', { useTz: true });
    stamps(t);
    t.unique(['provider', 'event_id']);
    t.index(['tenant_id', 'provider', 'status']);
    t.index(['tenant_id', 'event_type']);
    t.index(['tenant_id', 'created_at']);
  });

  await knex.schema.createTable('audit_entries', (t) => {
    id(t);
    tenant(t);
    t.text('action').notNullable();
    t.text('actor_type').notNullable();
    t.text('actor_id');
    t.text('request_id');
    t.text('outcome').notNullable();
    t.jsonb('detail');
    stamps(t);
    t.index(['tenant_id', 'action']);
    t.index(['tenant_id', 'actor_type']);
    t.index(['tenant_id', 'created_at']);
  });

  await knex.schema.createTable('sync_runs', (t) => {
    t.uuid('id').primary(); // the run_id; workflow id is sync-<run_id>
    tenant(t);
    t.text('kind').notNullable().defaultTo('sync');
    t.text('status').notNullable().defaultTo('running');
    t.integer('confirm_count');
    t.text('requested_by');
    t.jsonb('result');
    t.timestamp('finished_at', { useTz: true });
    stamps(t);
    t.index(['tenant_id', 'created_at']);
  });

  await knex.schema.createTable('sync_events', (t) => {
    id(t);
    tenant(t);
    t.uuid('run_id').notNullable().references('sync_runs.id').onDelete('CASCADE');
    t.text('provider').notNullable();
    t.text('status').notNullable();
    t.text('reason');
    t.jsonb('detail');
    stamps(t);
    t.index(['tenant_id', 'run_id']);
    t.index(['tenant_id', 'provider', 'status']);
  });

  await knex.schema.createTable('store_purchase_tokens', (t) => {
    id(t);
    tenant(t);
    t.text('provider').notNullable();
    t.text('token_hash').notNullable(); // SHA-256 of the token or transaction id
    t.text('app_user_id').notNullable();
    t.uuid('product_id').references('products.id').onDelete('SET NULL');
    t.uuid('entitlement_id').references('entitlements.id').onDelete('SET NULL');
    stamps(t);
    t.unique(['provider', 'token_hash']);
  });

  await knex.schema.createTable('rate_limit_buckets', (t) => {
    t.uuid('tenant_id').primary().references('tenants.id').onDelete('CASCADE');
    t.double('tokens').notNullable();
    t.timestamp('refreshed_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  // Check constraints the schema builder cannot say briefly.
  for (const table of [
    'app_providers',
    'product_provider_refs',
    'payment_links',
    'provider_plans',
    'coupon_counterparts',
    'subscriptions',
    'entitlements',
    'webhook_deliveries',
    'sync_events',
    'store_purchase_tokens',
  ]) {
    await knex.raw(`alter table ${table} add constraint ${table}_provider_check check (${PROVIDER_CHECK})`);
  }
  for (const table of ['product_provider_refs', 'payment_links', 'provider_plans', 'subscriptions']) {
    await knex.raw(`alter table ${table} add constraint ${table}_mode_check check (${MODE_CHECK})`);
  }
  await knex.raw(
    `alter table webhook_deliveries add constraint webhook_deliveries_mode_check check (mode is null or ${MODE_CHECK})`,
  );
  await knex.raw(`alter table subscriptions add constraint subscriptions_status_check
    check (status in ('trialing','active','past_due','canceled','refunded','expired'))`);
  await knex.raw(`alter table entitlements add constraint entitlements_state_check
    check (state in ('active','grace_period','expired','revoked'))`);
  await knex.raw(`alter table webhook_deliveries add constraint webhook_deliveries_status_check
    check (status in ('received','processed','failed'))`);

  await knex.raw(`grant select on tenants to ${APP_ROLE}`);
  for (const table of TENANT_TABLES) await tenantTablePolicies(knex, table);
  // tenants itself: a tenant sees only its own row.
  await knex.raw('alter table tenants enable row level security');
  await knex.raw('alter table tenants force row level security');
  await knex.raw(`create policy tenants_self on tenants to ${APP_ROLE}
    using (id = nullif(current_setting('app.tenant_id', true), '')::uuid)`);
  await knex.raw(
    `do $$ begin execute format('create policy tenants_system on tenants to %I using (true) with check (true)', current_user); end $$`,
  );
  await knex.raw(`grant update (plan, subscriber_limit, name, updated_at) on tenants to ${APP_ROLE}`);
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [...TENANT_TABLES].reverse()) await knex.schema.dropTableIfExists(table);
  await knex.schema.dropTableIfExists('tenants');
}
