import type { Knex } from 'knex';
import { tenantTablePolicies } from './tenant-policies';

/**
 * RevenueCat's client API (docs/revenuecat-compatibility.md).
 *
 * - `revenuecat_keys`: public keys in RevenueCat's formats (`rcb_sb_…`, `rcb_…`, `appl_…`,
 *   `goog_…`), one app and one mode each; only the SHA-256 of a key is stored, with a hint. The
 *   login role finds a key by its hash before any tenant is known (as `api_keys`), reading the
 *   columns that lookup needs and nothing else.
 * - `products.entitlement`: the entitlement a product unlocks, as RevenueCat's SDKs name it in
 *   `entitlements.active` (null: `premium`).
 * - `subscriber_attributes`: what an app sets on its user (`$email`, its own keys): stored and
 *   shown, never read for access; bounded per app user by the api (domain/revenuecat.ts).
 * - `app_user_aliases`: an anonymous app user id (`$RCAnonymousID:…`) that logged in as another:
 *   the reads of the identified id include the anonymous one's purchases.
 */
export const REVENUECAT_TENANT_TABLES = ['revenuecat_keys', 'subscriber_attributes', 'app_user_aliases'] as const;

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('revenuecat_keys', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.uuid('app_id').notNullable().references('apps.id').onDelete('CASCADE');
    t.text('platform').notNullable();
    t.text('mode').notNullable();
    t.text('key_hash').notNullable().unique();
    t.text('key_hint').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('revoked_at', { useTz: true });
    t.index(['tenant_id', 'created_at']);
  });
  await knex.raw(
    `alter table revenuecat_keys add constraint revenuecat_keys_platform_check check (platform in ('web', 'ios', 'android'))`,
  );
  await knex.raw(
    `alter table revenuecat_keys add constraint revenuecat_keys_mode_check check (mode in ('test', 'live'))`,
  );
  await tenantTablePolicies(knex, 'revenuecat_keys');
  // The pre-tenant lookup by hash (as api_keys_login_by_hash): the login role reads these columns only.
  await knex.raw(
    `create policy revenuecat_keys_login_by_hash on revenuecat_keys for select to billing_api using (true)`,
  );
  await knex.raw(
    `grant select (id, tenant_id, app_id, platform, mode, key_hash, revoked_at) on revenuecat_keys to billing_api`,
  );

  await knex.schema.alterTable('products', (t) => {
    t.text('entitlement');
  });
  await knex.raw(
    `alter table products add constraint products_entitlement_check check (entitlement ~ '^[A-Za-z0-9_.:-]{1,100}$')`,
  );

  await knex.schema.createTable('subscriber_attributes', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.text('app_user_id').notNullable();
    t.text('name').notNullable();
    t.text('value').notNullable();
    t.bigInteger('set_at_ms').notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['tenant_id', 'app_user_id', 'name']);
  });
  await tenantTablePolicies(knex, 'subscriber_attributes');

  await knex.schema.createTable('app_user_aliases', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.text('alias_id').notNullable();
    t.text('app_user_id').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['tenant_id', 'alias_id']);
    t.index(['tenant_id', 'app_user_id']);
  });
  await tenantTablePolicies(knex, 'app_user_aliases');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('app_user_aliases');
  await knex.schema.dropTable('subscriber_attributes');
  await knex.schema.alterTable('products', (t) => {
    t.dropColumn('entitlement');
  });
  await knex.schema.dropTable('revenuecat_keys');
}
