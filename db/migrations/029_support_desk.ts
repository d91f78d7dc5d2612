import type { Knex } from 'knex';
import { tenantTablePolicies } from './tenant-policies';

/**
 * The support desk (docs/support.md): one customer's story and access granted by hand.
 *
 * - `entitlement_grants`: access a person or a key gave an app user to one product, with a
 *   reason and an end. A source of its own, beside the paid `entitlements` rows: no provider or
 *   store write touches it, so the next store or provider event cannot undo it. The premium
 *   answer is the union of both (db/subscriptions.ts, db/entitlements.ts). `state` moves from
 *   `active` to `expired` (the grant's durable timer, workflows/grant-expiry.ts) or `revoked`
 *   (a person or key), never back.
 * - Its trigger emits `entitlement.<state>` outbound events like the paid rows' trigger does,
 *   with `source: "grant"`; the paid rows' events now say `source: "paid"`.
 * - `webhook_deliveries.subscription_id`: the subscription a provider event was applied to, set
 *   by the write that applied it, so a customer's timeline finds the events it received.
 * - `outbound_events (tenant_id, order_key, created_at)`: the events about one app user (the
 *   order key names the subject), for the same timeline; `subscriptions (tenant_id, app_user_id)`
 *   and `store_purchase_tokens (tenant_id, app_user_id)`: the customer's records.
 */
export const GRANT_TENANT_TABLES = ['entitlement_grants'] as const;

export async function up(knex: Knex): Promise<void> {
  const schema = (await knex.raw('select current_schema() as s')).rows[0].s as string;
  const path = `set search_path = "${schema.replace(/"/g, '""')}", pg_temp`;

  await knex.raw(`create table entitlement_grants (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants(id) on delete cascade,
      app_user_id text not null,
      product_id uuid not null,
      reason text not null,
      state text not null default 'active' check (state in ('active', 'expired', 'revoked')),
      expires_at timestamptz not null,
      granted_by text not null,
      revoked_by text,
      ended_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      foreign key (tenant_id, product_id) references products (tenant_id, id) on delete cascade)`);
  await knex.raw(
    'create index entitlement_grants_customer on entitlement_grants (tenant_id, app_user_id, created_at desc, id desc)',
  );
  await knex.raw('create index entitlement_grants_list on entitlement_grants (tenant_id, created_at desc, id desc)');
  await knex.raw(
    "create index entitlement_grants_active on entitlement_grants (tenant_id, app_user_id) where state = 'active'",
  );
  for (const table of GRANT_TENANT_TABLES) await tenantTablePolicies(knex, table);

  await knex.raw(`create function outbound_on_grant() returns trigger
    language plpgsql security definer ${path} as $fn$
    declare v_sku text;
    begin
      if not outbound_wanted(new.tenant_id, 'entitlement.' || new.state) then return null; end if;
      select p.sku into v_sku from products p where p.id = new.product_id and p.tenant_id = new.tenant_id;
      perform record_outbound_event(new.tenant_id, 'entitlement.' || new.state, new.app_user_id, jsonb_build_object(
        'app_user_id', new.app_user_id, 'state', new.state,
        'previous_state', case when tg_op = 'UPDATE' then old.state end,
        'source', 'grant', 'grant_id', new.id,
        'reason', 'grant', 'provider', null, 'product_id', new.product_id, 'sku', v_sku,
        'subscription_id', null, 'is_sandbox', false,
        'expires_at', new.expires_at, 'grace_until', null));
      return null;
    end $fn$`);
  await knex.raw(`create trigger outbound_grant_insert after insert on entitlement_grants
    for each row execute function outbound_on_grant()`);
  await knex.raw(`create trigger outbound_grant_update after update of state on entitlement_grants
    for each row when (old.state is distinct from new.state) execute function outbound_on_grant()`);

  // The paid rows' events, as migration 024 wrote them, now naming their source.
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
        'source', 'paid',
        'reason', v_status, 'provider', new.provider, 'product_id', new.product_id, 'sku', v_sku,
        'subscription_id', new.subscription_id, 'is_sandbox', new.is_sandbox,
        'expires_at', new.expires_at, 'grace_until', new.grace_until));
      return null;
    end $fn$`);

  await knex.raw(
    'alter table webhook_deliveries add column subscription_id uuid references subscriptions (id) on delete set null',
  );
  await knex.raw(
    'create index webhook_deliveries_subscription on webhook_deliveries (subscription_id, created_at) where subscription_id is not null',
  );
  await knex.raw('create index outbound_events_subject on outbound_events (tenant_id, order_key, created_at desc)');
  await knex.raw('create index store_purchase_tokens_customer on store_purchase_tokens (tenant_id, app_user_id)');
  // The customer page finds a customer's subscriptions by app user (bench/customer-view.ts: a sequential scan of
  // 100,000 rows per statement without it).
  await knex.raw('create index subscriptions_customer on subscriptions (tenant_id, app_user_id)');
}

export async function down(knex: Knex): Promise<void> {
  const schema = (await knex.raw('select current_schema() as s')).rows[0].s as string;
  const path = `set search_path = "${schema.replace(/"/g, '""')}", pg_temp`;
  await knex.raw('drop index if exists subscriptions_customer');
  await knex.raw('drop index if exists store_purchase_tokens_customer');
  await knex.raw('drop index if exists outbound_events_subject');
  await knex.raw('alter table webhook_deliveries drop column if exists subscription_id');
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
  await knex.raw('drop table if exists entitlement_grants');
  await knex.raw('drop function if exists outbound_on_grant()');
}
