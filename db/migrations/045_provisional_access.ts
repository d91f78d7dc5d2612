import type { Knex } from 'knex';
import { LOGIN_ROLE } from '../login-role';
import { tenantTablePolicies } from './tenant-policies';

/**
 * Provisional access (docs/provisional-access.md; the rules: domain/provisional.ts).
 *
 * - `provisional_access`: a table of its own beside the paid `entitlements` rows, so the
 *   authoritative writer stays what it was: one upsert, which now also deletes the app user's
 *   provisional grants of the entitlement it writes (db/entitlements.ts), and no trigger, outbound
 *   event or readiness check ever fires for a provisional row. `kind` `grant`: premium for an app
 *   user and a product until `expires_at`, linked to the delivery that granted it; `stop`: a
 *   received ending (refund, expiry, cancellation) of one customer of one provider, at its provider
 *   time, which refuses older grants arriving later. Stops are kept: an engine paused for longer
 *   than a grant's life must still refuse a stale success.
 * - `record_provisional_access`: what the webhook receiver calls inside its one statement (as the
 *   login role, before any tenant transaction: SECURITY DEFINER, every row filtered by the
 *   verified tenant it is given). A grant looks the product up by SKU, refuses what the held state
 *   ended at or after the event's time, or what a received stop covers, inserts and notifies the
 *   app user's premium waiters (db/entitlement-notify.ts; the payload is computed by the caller).
 *   A stop withdraws the grants it covers and is recorded.
 * - `expire_provisional_access`: grants past their expiry without confirmation become
 *   `unconfirmed`, once each, answering how many per provider (the metric
 *   `billing_provisional_unconfirmed_total`, api/metrics.ts). Bounded per call.
 */
async function searchPath(knex: Knex): Promise<string> {
  const schema = (await knex.raw('select current_schema() as s')).rows[0].s as string;
  return `set search_path = "${schema.replace(/"/g, '""')}", pg_temp`;
}

export const PROVISIONAL_TENANT_TABLES = ['provisional_access'] as const;

/** domain/entitlement.ts PREMIUM_STATES as the function holds it (a migration is frozen; the test compares). */
const PREMIUM = `('active', 'grace_period')`;

/**
 * The receipt's function as first made here: it also wakes the app user's premium waiters itself,
 * inside the receiver's writing statement (050 remakes it without; 051 adds the renewal answer).
 */
const recordProvisionalAccess = (path: string): string => `create or replace function record_provisional_access(
      p_tenant uuid, p_provider text, p_delivery uuid, p_stop boolean, p_customer_key text, p_subscription text,
      p_app_user text, p_sku text, p_event_at timestamptz, p_sandbox boolean, p_seconds integer, p_notify text)
    returns integer language plpgsql security definer ${path} as $fn$
    declare v_product uuid; v_n integer;
    begin
      if p_stop then
        update provisional_access set state = 'withdrawn', updated_at = now()
         where tenant_id = p_tenant and provider = p_provider and customer_key = p_customer_key and kind = 'grant'
           and state = 'provisional' and event_at <= p_event_at;
        get diagnostics v_n = row_count;
        insert into provisional_access (tenant_id, provider, kind, customer_key, delivery_id, event_at)
        values (p_tenant, p_provider, 'stop', p_customer_key, p_delivery, p_event_at);
        return v_n;
      end if;
      if p_app_user is null or p_sku is null then return 0; end if;
      select id into v_product from products
       where tenant_id = p_tenant and lower(sku) = lower(p_sku) order by created_at limit 1;
      if v_product is null then return 0; end if;
      -- The held state ended access at or after the event's time (domain/provisional.ts heldEndedSince).
      if exists (select 1 from entitlements e
                  where e.tenant_id = p_tenant and e.app_user_id = p_app_user and e.provider = p_provider
                    and e.product_id = v_product and e.state not in ${PREMIUM} and e.expires_at >= p_event_at)
         or (p_subscription is not null and exists (
               select 1 from subscriptions s join entitlements e on e.subscription_id = s.id and e.tenant_id = s.tenant_id
                where s.tenant_id = p_tenant and s.provider = p_provider and s.external_id = p_subscription
                  and e.state not in ${PREMIUM} and e.expires_at >= p_event_at))
         -- A received ending of the same customer at or after it.
         or exists (select 1 from provisional_access a
                     where a.tenant_id = p_tenant and a.provider = p_provider and a.customer_key = p_customer_key
                       and a.kind = 'stop' and a.event_at >= p_event_at)
      then return 0; end if;
      insert into provisional_access (tenant_id, provider, kind, customer_key, app_user_id, product_id, is_sandbox,
                                      delivery_id, event_at, expires_at)
      values (p_tenant, p_provider, 'grant', p_customer_key, p_app_user, v_product, p_sandbox, p_delivery, p_event_at,
              now() + make_interval(secs => p_seconds));
      perform pg_notify('entitlement_changed', p_notify);
      return 1;
    end $fn$`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`create table provisional_access (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants(id) on delete cascade,
      provider text not null check (provider in ('psp_a','psp_b','psp_c','store_android','store_ios')),
      kind text not null check (kind in ('grant', 'stop')),
      customer_key text not null,
      app_user_id text,
      product_id uuid,
      is_sandbox boolean not null default false,
      delivery_id uuid references webhook_deliveries(id) on delete set null,
      event_at timestamptz not null,
      expires_at timestamptz,
      state text not null default 'provisional' check (state in ('provisional', 'unconfirmed', 'withdrawn')),
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      check ((kind = 'grant') = (app_user_id is not null and product_id is not null and expires_at is not null)),
      foreign key (tenant_id, product_id) references products (tenant_id, id) on delete cascade)`);
  await knex.raw(
    `create index provisional_access_user on provisional_access (tenant_id, app_user_id, provider, product_id) where kind = 'grant'`,
  );
  await knex.raw(
    'create index provisional_access_customer on provisional_access (tenant_id, provider, customer_key, kind, event_at)',
  );
  await knex.raw(
    `create index provisional_access_due on provisional_access (expires_at) where kind = 'grant' and state = 'provisional'`,
  );
  for (const table of PROVISIONAL_TENANT_TABLES) await tenantTablePolicies(knex, table);

  const path = await searchPath(knex);
  await knex.raw(recordProvisionalAccess(path));
  await knex.raw(`create function expire_provisional_access(p_max integer)
    returns table (provider text, n integer) language sql security definer ${path} as $fn$
      with due as (select id from provisional_access
                    where kind = 'grant' and state = 'provisional' and expires_at <= now()
                    order by expires_at limit p_max for update skip locked),
           x as (update provisional_access a set state = 'unconfirmed', updated_at = now()
                   from due where a.id = due.id returning a.provider)
      select x.provider, count(*)::integer from x group by x.provider
    $fn$`);
  for (const f of [
    'record_provisional_access(uuid, text, uuid, boolean, text, text, text, text, timestamptz, boolean, integer, text)',
    'expire_provisional_access(integer)',
  ]) {
    await knex.raw(`revoke execute on function ${f} from public`);
    await knex.raw(`grant execute on function ${f} to ${LOGIN_ROLE}`);
  }
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop function if exists expire_provisional_access(integer)');
  await knex.raw(
    'drop function if exists record_provisional_access(uuid, text, uuid, boolean, text, text, text, text, timestamptz, boolean, integer, text)',
  );
  await knex.raw('drop table if exists provisional_access');
}
