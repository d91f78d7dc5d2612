import type { Knex } from 'knex';

/**
 * Outbound webhooks: no tenant crowds another's deliveries, and the triggers that record them
 * read only the tenant's own rows (docs/outbound-webhooks.md, "Limits").
 *
 * - `outbound_drains.posting`, `waiting_since`: whether the drain holds one of its tenant's
 *   turns (MAX_ACTIVE_DRAINS_PER_TENANT of a tenant's drains post at once), or since when it waits
 *   for one. A drain refused a turn holds a *parked* lease (the dispatcher need not wake it: its
 *   workflow looks again when the park ends) and waits, longest waiting first; a drain looking
 *   for more work after its last round holds a lease but no turn (domain/outbound-limits.ts,
 *   db/outbound-drain.ts).
 * - `webhook_endpoints.drain_width`: how many of the endpoint's deliveries are posted side by
 *   side; halved after a round in which the receiver was slow (an attempt timed out or took more
 *   than half the timeout), grown back by one after a quick full round, between 1 and 8.
 * - The two SECURITY DEFINER triggers that read other tables (`outbound_on_entitlement` reads the
 *   subscription and the product, `outbound_on_subscription` the product) run as the owner, past
 *   RLS: each read now names the row's tenant too, so an id that pointed into another tenant
 *   would read nothing rather than that tenant's status or SKU.
 * - Foreign keys carry the tenant where the parent is small (its extra unique index costs
 *   little): deliveries and drain leases name their endpoint as (tenant_id, endpoint_id), and
 *   entitlements and subscriptions their product as (tenant_id, product_id), so a row can only
 *   point at a row of its own tenant. Not done for the large, hot parents (subscriptions,
 *   outbound_events, outbound_deliveries): a unique (tenant_id, id) index on each would cost
 *   every state change an index entry, and their only writers take the tenant from one place
 *   (record_outbound_event, and the RLS-checked tenant transactions).
 */
export async function up(knex: Knex): Promise<void> {
  const schema = (await knex.raw('select current_schema() as s')).rows[0].s as string;
  const path = `set search_path = "${schema.replace(/"/g, '""')}", pg_temp`;

  await knex.raw(
    `alter table outbound_drains add column posting boolean not null default true, add column waiting_since timestamptz`,
  );
  await knex.raw(
    `alter table webhook_endpoints add column drain_width smallint not null default 8 check (drain_width between 1 and 8)`,
  );

  await knex.raw(`create or replace function outbound_on_entitlement() returns trigger
    language plpgsql security definer ${path} as $fn$
    declare v_status text; v_sku text;
    begin
      if not outbound_wanted(new.tenant_id, 'entitlement.' || new.state) then return null; end if;
      select s.status into v_status from subscriptions s where s.id = new.subscription_id and s.tenant_id = new.tenant_id;
      select p.sku into v_sku from products p where p.id = new.product_id and p.tenant_id = new.tenant_id;
      perform record_outbound_event(new.tenant_id, 'entitlement.' || new.state, new.app_user_id, jsonb_build_object(
        'app_user_id', new.app_user_id, 'state', new.state,
        'previous_state', case when tg_op = 'UPDATE' then old.state end,
        'reason', v_status, 'provider', new.provider, 'product_id', new.product_id, 'sku', v_sku,
        'subscription_id', new.subscription_id, 'is_sandbox', new.is_sandbox,
        'expires_at', new.expires_at, 'grace_until', new.grace_until));
      return null;
    end $fn$`);
  await knex.raw(`create or replace function outbound_on_subscription() returns trigger
    language plpgsql security definer ${path} as $fn$
    declare v_sku text;
    begin
      if not outbound_wanted(new.tenant_id, 'subscription.status_changed') then return null; end if;
      select p.sku into v_sku from products p where p.id = new.product_id and p.tenant_id = new.tenant_id;
      -- The same subject as the entitlement it leads to (activities/lifecycle.ts names the app user that way).
      perform record_outbound_event(new.tenant_id, 'subscription.status_changed',
        coalesce(new.app_user_id, new.email, new.customer_external_id, new.external_id), jsonb_build_object(
        'subscription_id', new.id, 'provider', new.provider, 'external_id', new.external_id,
        'status', new.status, 'previous_status', case when tg_op = 'UPDATE' then old.status end,
        'app_user_id', new.app_user_id, 'product_id', new.product_id, 'sku', v_sku, 'mode', new.mode,
        'current_period_end', new.current_period_end, 'canceled_at', new.canceled_at));
      return null;
    end $fn$`);

  // Composite keys: the parent's (tenant_id, id), then each child's key replaced by one naming the tenant.
  await knex.raw(
    'alter table webhook_endpoints add constraint webhook_endpoints_tenant_id_id_key unique (tenant_id, id)',
  );
  await knex.raw('alter table products add constraint products_tenant_id_id_key unique (tenant_id, id)');
  // A link into another tenant would stop the new key; none should exist, and one that did is the flaw itself:
  // unlinked.
  for (const table of ['entitlements', 'subscriptions']) {
    await knex.raw(`update ${table} c set product_id = null where c.product_id is not null
      and not exists (select 1 from products p where p.id = c.product_id and p.tenant_id = c.tenant_id)`);
  }
  for (const [table, column, parent, action] of [
    ['outbound_deliveries', 'endpoint_id', 'webhook_endpoints', 'on delete cascade'],
    ['outbound_drains', 'endpoint_id', 'webhook_endpoints', 'on delete cascade'],
    ['entitlements', 'product_id', 'products', 'on delete set null (product_id)'],
    ['subscriptions', 'product_id', 'products', 'on delete set null (product_id)'],
  ] as const) {
    await dropForeignKeyOn(knex, table, column);
    await knex.raw(
      `alter table ${table} add constraint ${table}_tenant_${column}_fkey foreign key (tenant_id, ${column}) references ${parent} (tenant_id, id) ${action}`,
    );
  }
}

/**
 * The single-column foreign key on `table(column)`, whatever it was named (knex and Postgres name them differently).
 */
async function dropForeignKeyOn(knex: Knex, table: string, column: string): Promise<void> {
  const { rows } = await knex.raw(
    `select c.conname from pg_constraint c
      where c.conrelid = ?::regclass and c.contype = 'f'
        and c.conkey = array[(select attnum from pg_attribute where attrelid = ?::regclass and attname = ?)]::smallint[]`,
    [table, table, column],
  );
  for (const r of rows as { conname: string }[]) await knex.raw(`alter table ${table} drop constraint "${r.conname}"`);
}

export async function down(knex: Knex): Promise<void> {
  for (const [table, column, parent, action] of [
    ['outbound_deliveries', 'endpoint_id', 'webhook_endpoints', 'on delete cascade'],
    ['outbound_drains', 'endpoint_id', 'webhook_endpoints', 'on delete cascade'],
    ['entitlements', 'product_id', 'products', 'on delete set null'],
    ['subscriptions', 'product_id', 'products', 'on delete set null'],
  ] as const) {
    await knex.raw(`alter table ${table} drop constraint ${table}_tenant_${column}_fkey`);
    await knex.raw(`alter table ${table} add foreign key (${column}) references ${parent} (id) ${action}`);
  }
  await knex.raw('alter table products drop constraint products_tenant_id_id_key');
  await knex.raw('alter table webhook_endpoints drop constraint webhook_endpoints_tenant_id_id_key');
  await knex.raw('alter table webhook_endpoints drop column drain_width');
  await knex.raw('alter table outbound_drains drop column posting, drop column waiting_since');
}
