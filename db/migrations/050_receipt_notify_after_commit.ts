import type { Knex } from 'knex';

/**
 * The receipt's provisional grant no longer notifies inside the receiver's writing statement.
 * A NOTIFY in a writing transaction holds Postgres's one notify lock (server-wide) from its
 * pre-commit through the commit's WAL flush, so every granting receipt committed one after
 * another: under load 81–84 % of the receiving backends waited on that lock (bench/RESULTS.md,
 * "Sustained webhook ingest"). The receiver now wakes the app user's waiters with a statement of
 * its own after the commit (db/entitlement-notify.ts `notifyAfterCommit`), which writes no WAL.
 *
 * The function's text is written out here, both ways (a migration is frozen: it does not borrow
 * an earlier migration's code): up, 045's without the `pg_notify`; down, 045's as it was.
 */
async function searchPath(knex: Knex): Promise<string> {
  const schema = (await knex.raw('select current_schema() as s')).rows[0].s as string;
  return `set search_path = "${schema.replace(/"/g, '""')}", pg_temp`;
}

/** record_provisional_access without the NOTIFY (this migration's up; 051's down). */
const WITHOUT_NOTIFY = (path: string): string => `create or replace function record_provisional_access(
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
                    and e.product_id = v_product and e.state not in ('active', 'grace_period') and e.expires_at >= p_event_at)
         or (p_subscription is not null and exists (
               select 1 from subscriptions s join entitlements e on e.subscription_id = s.id and e.tenant_id = s.tenant_id
                where s.tenant_id = p_tenant and s.provider = p_provider and s.external_id = p_subscription
                  and e.state not in ('active', 'grace_period') and e.expires_at >= p_event_at))
         -- A received ending of the same customer at or after it.
         or exists (select 1 from provisional_access a
                     where a.tenant_id = p_tenant and a.provider = p_provider and a.customer_key = p_customer_key
                       and a.kind = 'stop' and a.event_at >= p_event_at)
      then return 0; end if;
      insert into provisional_access (tenant_id, provider, kind, customer_key, app_user_id, product_id, is_sandbox,
                                      delivery_id, event_at, expires_at)
      values (p_tenant, p_provider, 'grant', p_customer_key, p_app_user, v_product, p_sandbox, p_delivery, p_event_at,
              now() + make_interval(secs => p_seconds));
      return 1;
    end $fn$`;

/** record_provisional_access as 045 made it, notifying inside the statement (this migration's down). */
const AS_045 = (path: string): string => `create or replace function record_provisional_access(
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
                    and e.product_id = v_product and e.state not in ('active', 'grace_period') and e.expires_at >= p_event_at)
         or (p_subscription is not null and exists (
               select 1 from subscriptions s join entitlements e on e.subscription_id = s.id and e.tenant_id = s.tenant_id
                where s.tenant_id = p_tenant and s.provider = p_provider and s.external_id = p_subscription
                  and e.state not in ('active', 'grace_period') and e.expires_at >= p_event_at))
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
  await knex.raw(WITHOUT_NOTIFY(await searchPath(knex)));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(AS_045(await searchPath(knex)));
}
