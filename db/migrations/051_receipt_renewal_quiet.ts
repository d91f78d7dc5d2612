import type { Knex } from 'knex';

/**
 * A receipt's grant tells a renewal from a first grant. A checkout's events all grant the same
 * access (the payment, the subscription, its invoice), so only the first changes the premium
 * answer; the receiver woke the app user's waiters after each of them, three notifying statements
 * per purchase where one does anything (bench/RESULTS.md, "Sustained webhook ingest"). The function
 * now answers 2 for a grant made while the same live grant was held, and the receiver wakes
 * waiters only after a first grant (db/webhook-deliveries.ts `storeDelivery`).
 *
 * The function's text is written out here, both ways (a migration does not borrow an earlier
 * migration's code): up, with the renewal answer; down, 050's as it was.
 */
async function searchPath(knex: Knex): Promise<string> {
  const schema = (await knex.raw('select current_schema() as s')).rows[0].s as string;
  return `set search_path = "${schema.replace(/"/g, '""')}", pg_temp`;
}

/** record_provisional_access answering 2 for a renewal (this migration's up). */
const WITH_RENEWAL = (path: string): string => `create or replace function record_provisional_access(
      p_tenant uuid, p_provider text, p_delivery uuid, p_stop boolean, p_customer_key text, p_subscription text,
      p_app_user text, p_sku text, p_event_at timestamptz, p_sandbox boolean, p_seconds integer, p_notify text)
    returns integer language plpgsql security definer ${path} as $fn$
    declare v_product uuid; v_n integer; v_held boolean;
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
      select exists (select 1 from provisional_access a
                      where a.tenant_id = p_tenant and a.app_user_id = p_app_user and a.provider = p_provider
                        and a.product_id = v_product and a.kind = 'grant' and a.state = 'provisional'
                        and a.expires_at > now()) into v_held;
      insert into provisional_access (tenant_id, provider, kind, customer_key, app_user_id, product_id, is_sandbox,
                                      delivery_id, event_at, expires_at)
      values (p_tenant, p_provider, 'grant', p_customer_key, p_app_user, v_product, p_sandbox, p_delivery, p_event_at,
              now() + make_interval(secs => p_seconds));
      return case when v_held then 2 else 1 end;
    end $fn$`;

/** record_provisional_access as 050 made it, without the NOTIFY (this migration's down). */
const AS_050 = (path: string): string => `create or replace function record_provisional_access(
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

export async function up(knex: Knex): Promise<void> {
  await knex.raw(WITH_RENEWAL(await searchPath(knex)));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(AS_050(await searchPath(knex)));
}
