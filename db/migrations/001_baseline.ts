import type { Knex } from 'knex';
import { APP_ROLE } from '../tenant-tx';
import { LOGIN_ROLE } from '../login-role';

/**
 * The schema as of 0.1.0, in one step: the 41 migrations written while the service was built
 * (001_schema … 051_receipt_renewal_quiet), squashed before any production database existed.
 * The statements are what PostgreSQL itself printed for a database those migrations had made
 * (`pg_dump --schema-only --no-owner`, comments and session settings left out), so they are the
 * schema exactly; the reasons behind each table, trigger and grant are in docs/ (data-layer.md
 * lists the triggers, tenancy-and-rls.md the roles and policies). Migrations after this one are
 * history again: one file per change, never edited once released.
 *
 * Two things depend on the deployment rather than the schema: the roles (cluster-wide; parallel
 * test databases race to create them) and the owner's own policies (`<table>_system`, the one
 * deliberate exception to the tenant rule: key lookup, webhook routing, the admin CLI), which name
 * whoever runs the migrations.
 *
 * An installation made by the earlier migrations already has this schema: the step then records
 * itself and changes nothing.
 */
export async function up(knex: Knex): Promise<void> {
  if (await knex.schema.hasTable('tenants')) return;
  for (const [role, attributes] of [
    [APP_ROLE, 'nologin'],
    [LOGIN_ROLE, 'nologin noinherit'],
  ])
    await knex.raw(`do $$ begin
        if not exists (select 1 from pg_roles where rolname = '${role}') then create role ${role} ${attributes}; end if;
      exception when duplicate_object or unique_violation then null;
      end $$`);
  await knex.raw(`do $$ begin execute format('grant ${APP_ROLE} to %I', current_user);
    exception when others then null; end $$`);
  const { rows } = await knex.raw(`select quote_ident(current_user) as owner`);
  // Function bodies may name tables made later in the script, as in any dump.
  await knex.raw('set local check_function_bodies = false');
  await knex.raw(SCHEMA.replaceAll(' TO :owner ', ` TO ${rows[0].owner} `));
}

export async function down(): Promise<void> {
  throw new Error('The baseline is not undone: drop the database instead.');
}

const SCHEMA = String.raw`
CREATE EXTENSION IF NOT EXISTS pgcrypto WITH SCHEMA public;

CREATE FUNCTION public.chart_folds_due() RETURNS SETOF uuid
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
      select tenant_id from chart_pending
      union
      select tenant_id from chart_subscription_facts where due is not null and due <= now()
    $$;

CREATE FUNCTION public.chart_mark_catalogue() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
    begin
      if tg_op = 'DELETE' and not exists (select 1 from tenants where id = old.tenant_id) then return null; end if;
      insert into chart_pending (tenant_id, subscription_id) select coalesce(new.tenant_id, old.tenant_id), null;
      return null;
    end $$;

CREATE FUNCTION public.chart_mark_subscription() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
    begin
      if tg_op = 'DELETE' and not exists (select 1 from tenants where id = old.tenant_id) then return null; end if;
      insert into chart_pending (tenant_id, subscription_id)
      select coalesce(new.tenant_id, old.tenant_id), coalesce(new.subscription_id, old.subscription_id);
      return null;
    end $$;

CREATE FUNCTION public.chart_mark_subscription_row() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
    begin
      if tg_op = 'DELETE' and not exists (select 1 from tenants where id = old.tenant_id) then return null; end if;
      insert into chart_pending (tenant_id, subscription_id)
      select coalesce(new.tenant_id, old.tenant_id), coalesce(new.id, old.id);
      return null;
    end $$;

CREATE FUNCTION public.expire_provisional_access(p_max integer) RETURNS TABLE(provider text, n integer)
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
      with due as (select id from provisional_access
                    where kind = 'grant' and state = 'provisional' and expires_at <= now()
                    order by expires_at limit p_max for update skip locked),
           x as (update provisional_access a set state = 'unconfirmed', updated_at = now()
                   from due where a.id = due.id returning a.provider)
      select x.provider, count(*)::integer from x group by x.provider
    $$;

CREATE FUNCTION public.mark_receipt_premium(p_tenant uuid, p_delivery uuid) RETURNS integer
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
      with u as (update webhook_deliveries set premium_at = now()
                  where id = p_delivery and tenant_id = p_tenant and premium_at is null
                    and created_at = now() returning 1)
      select count(*)::integer from u
    $$;

CREATE FUNCTION public.outbound_on_entitlement() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
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
    end $$;

CREATE FUNCTION public.outbound_on_grant() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
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
    end $$;

CREATE FUNCTION public.outbound_on_inbound_failure() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
    begin
      perform record_outbound_event(new.tenant_id, 'inbound_delivery.failed', null, jsonb_build_object(
        'delivery_id', new.id, 'provider', new.provider, 'event_id', new.event_id, 'event_type', new.event_type,
        'mode', new.mode, 'reason', new.reason));
      return null;
    end $$;

CREATE FUNCTION public.outbound_on_reconciliation() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
    begin
      perform record_outbound_event(new.tenant_id, 'subscription.reconciled', new.app_user_id, jsonb_build_object(
        'reconciliation_id', new.id, 'run_id', new.run_id, 'provider', new.provider,
        'external_id', new.subscription_external_id, 'app_user_id', new.app_user_id,
        'held', new.held, 'provider_state', new.provider_state, 'applied', new.applied));
      return null;
    end $$;

CREATE FUNCTION public.outbound_on_subscription() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
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
    end $$;

CREATE FUNCTION public.outbound_on_sync_run() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
    begin
      perform record_outbound_event(new.tenant_id, 'sync_run.finished', null, jsonb_build_object(
        'run_id', new.id, 'kind', new.kind, 'status', new.status, 'finished_at', new.finished_at,
        'result', new.result));
      return null;
    end $$;

CREATE FUNCTION public.outbound_wanted(p_tenant uuid, p_type text) RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
      select not (coalesce(current_setting('app.outbound_quiet', true), '') = 'on'
  and (p_type like 'entitlement.%' or p_type = 'subscription.status_changed')) and exists (select 1 from webhook_endpoints e where e.tenant_id = p_tenant and e.enabled
                      and (cardinality(e.event_types) = 0 or p_type = any(e.event_types)))
    $$;

CREATE FUNCTION public.overview_change_day() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
    begin
      if tg_op = 'DELETE' and not exists (select 1 from tenants where id = old.tenant_id) then return null; end if;
      insert into overview_change_days (tenant_id, mode, provider, day, changes, new_trials, conversions, cancellations, refunds, active_delta)
      select 
  old.tenant_id, old.mode, old.provider, (old.changed_at at time zone 'UTC')::date, -1,
  -1 * (old.to_status = 'trialing' and old.from_status is distinct from 'trialing')::int,
  -1 * coalesce(old.from_status = 'trialing' and old.to_status = 'active', false)::int,
  -1 * (old.to_status = 'canceled')::int,
  -1 * (old.to_status = 'refunded')::int,
  -1 * ((old.to_status = 'active')::int - coalesce(old.from_status = 'active', false)::int) where tg_op <> 'INSERT'
      union all
      select 
  new.tenant_id, new.mode, new.provider, (new.changed_at at time zone 'UTC')::date, 1,
  1 * (new.to_status = 'trialing' and new.from_status is distinct from 'trialing')::int,
  1 * coalesce(new.from_status = 'trialing' and new.to_status = 'active', false)::int,
  1 * (new.to_status = 'canceled')::int,
  1 * (new.to_status = 'refunded')::int,
  1 * ((new.to_status = 'active')::int - coalesce(new.from_status = 'active', false)::int) where tg_op <> 'DELETE';
      return null;
    end $$;

CREATE FUNCTION public.overview_count_entitlement() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
    begin
      if tg_op = 'DELETE' and not exists (select 1 from tenants where id = old.tenant_id) then return null; end if;
      insert into overview_entitlement_counts (tenant_id, is_sandbox, provider, state, n)
      select old.tenant_id, old.is_sandbox, old.provider, old.state, -1 where tg_op <> 'INSERT'
      union all
      select new.tenant_id, new.is_sandbox, new.provider, new.state, 1 where tg_op <> 'DELETE';
      return null;
    end $$;

CREATE FUNCTION public.overview_count_subscription() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
    begin
      if tg_op = 'DELETE' and not exists (select 1 from tenants where id = old.tenant_id) then return null; end if;
      insert into overview_subscription_counts (tenant_id, mode, provider, status, product_id, n)
      select old.tenant_id, old.mode, old.provider, old.status, old.product_id, -1 where tg_op <> 'INSERT'
      union all
      select new.tenant_id, new.mode, new.provider, new.status, new.product_id, 1 where tg_op <> 'DELETE';
      return null;
    end $$;

CREATE FUNCTION public.overview_rollups_due(threshold integer) RETURNS SETOF uuid
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
      select tenant_id from (
        select tenant_id, count(*) - count(distinct (mode, provider, status, product_id)) as piled
          from overview_subscription_counts group by tenant_id
        union all
        select tenant_id, count(*) - count(distinct (is_sandbox, provider, state))
          from overview_entitlement_counts group by tenant_id
        union all
        select tenant_id, count(*) - count(distinct (mode, provider, day))
          from overview_change_days where day > (now() at time zone 'UTC')::date - 90 group by tenant_id
      ) p
      where piled > threshold
      group by tenant_id
    $$;

CREATE FUNCTION public.provider_connections_key_claims() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
    begin
      if new.provider in ('psp_b', 'psp_c') and new.verified_by = 'provider_call' then
        raise exception 'provider_connections_key_claims: a % account is claimed by OAuth, not by a provider call with a pasted key', new.provider
          using errcode = 'check_violation';
      end if;
      if new.provider not in ('psp_b', 'psp_c') and new.verified_by = 'pasted_key' then
        raise exception 'provider_connections_key_claims: pasted_key is a psp_b/psp_c claim only' using errcode = 'check_violation';
      end if;
      return new;
    end $$;

CREATE FUNCTION public.record_outbound_event(p_tenant uuid, p_type text, p_subject text, p_data jsonb) RETURNS uuid
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
    declare
      v_event uuid := gen_random_uuid();
      v_key text;
      v_own text := nullif(current_setting('app.tenant_id', true), '');
      v_data jsonb := p_data;
      v_seq bigint;
    begin
      if v_own is not null and v_own::uuid <> p_tenant then
        raise exception 'record_outbound_event: tenant % may not record events of another tenant', v_own;
      end if;
      if not outbound_wanted(p_tenant, p_type) then return null; end if;
      v_key := case when p_subject is null then 'evt-' || v_event
                    else 'sub-' || left(encode(sha256(convert_to(p_tenant::text || ':' || p_subject, 'UTF8')), 'hex'), 32) end;
      if p_subject is not null then
        insert into customer_event_sequences as s (tenant_id, subject, seq) values (p_tenant, p_subject, 1)
          on conflict (tenant_id, subject) do update set seq = s.seq + 1
          returning seq into v_seq;
        v_data := v_data || jsonb_build_object('sequence', v_seq, 'entitlements', coalesce((
          select jsonb_agg(x.e order by x.at, x.id) from (
            select e.created_at as at, e.id, jsonb_build_object('source', 'paid', 'provider', e.provider,
                'product_id', e.product_id, 'sku', p.sku, 'state', e.state, 'is_sandbox', e.is_sandbox,
                'expires_at', e.expires_at, 'grace_until', e.grace_until) as e
              from entitlements e left join products p on p.id = e.product_id and p.tenant_id = e.tenant_id
             where e.tenant_id = p_tenant and e.app_user_id = p_subject
            union all
            select g.created_at, g.id, jsonb_build_object('source', 'grant', 'grant_id', g.id, 'provider', null,
                'product_id', g.product_id, 'sku', p.sku, 'state', g.state, 'is_sandbox', false,
                'expires_at', g.expires_at, 'grace_until', null)
              from entitlement_grants g left join products p on p.id = g.product_id and p.tenant_id = g.tenant_id
             where g.tenant_id = p_tenant and g.app_user_id = p_subject and g.state = 'active') x), '[]'::jsonb));
      end if;
      insert into outbound_events (id, tenant_id, type, order_key, body)
        values (v_event, p_tenant, p_type, v_key, jsonb_build_object(
          'id', v_event, 'type', p_type, 'version', 1,
          'timestamp', to_char(clock_timestamp() at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
          'data', v_data));
      with d as (
        insert into outbound_deliveries (tenant_id, event_id, endpoint_id)
          select p_tenant, v_event, e.id from webhook_endpoints e
           where e.tenant_id = p_tenant and e.enabled and (cardinality(e.event_types) = 0 or p_type = any(e.event_types))
        returning id, endpoint_id)
      insert into outbound_outbox (delivery_id, task_queue, handover)
        select d.id, e.task_queue, jsonb_build_object('tenantId', p_tenant, 'endpointId', d.endpoint_id, 'deliveryId', d.id)
          from d join webhook_endpoints e on e.id = d.endpoint_id;
      return v_event;
    end $$;

CREATE FUNCTION public.record_provisional_access(p_tenant uuid, p_provider text, p_delivery uuid, p_stop boolean, p_customer_key text, p_subscription text, p_app_user text, p_sku text, p_event_at timestamp with time zone, p_sandbox boolean, p_seconds integer, p_notify text) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
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
    end $$;

CREATE FUNCTION public.record_subscription_change() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
    begin
      if tg_op = 'INSERT' or new.status is distinct from old.status then
        insert into subscription_changes (tenant_id, subscription_id, provider, mode, from_status, to_status, changed_at)
        values (new.tenant_id, new.id, new.provider, new.mode, case when tg_op = 'UPDATE' then old.status end, new.status,
          greatest(least(coalesce(new.status_since, now()), now()),
            (select max(changed_at) from subscription_changes where subscription_id = new.id) + interval '1 microsecond'));
      end if;
      return null;
    end $$;

CREATE FUNCTION public.record_subscription_product() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
    begin
      insert into subscription_product_changes (tenant_id, subscription_id, product_id, changed_at)
      values (new.tenant_id, new.id, new.product_id,
        greatest(least(coalesce(new.status_since, now()), now()),
          (select max(changed_at) from subscription_product_changes where tenant_id = new.tenant_id and subscription_id = new.id)
            + interval '1 microsecond'));
      return null;
    end $$;

CREATE FUNCTION public.release_pasted_key_claims(p_connection uuid) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $_$
    declare
      v_tenant uuid := nullif(current_setting('app.tenant_id', true), '')::uuid;
      v_provider text;
      v_account text;
      v_released integer;
    begin
      if v_tenant is null then raise exception 'release_pasted_key_claims: run inside a tenant transaction'; end if;
      select c.provider, c.account_ref into v_provider, v_account
        from provider_connections c where c.id = p_connection and c.tenant_id = v_tenant;
      if not found then raise exception 'release_pasted_key_claims: no such connection of this tenant'; end if;
      update provider_connections c
         set verified_at = null, verified_by = null, proof_checked_at = now(), proof_error = $msg$no longer receives this account's events: the account was connected with OAuth by its owner. A pasted key no longer proves a psp_b or psp_c account; this connection still works for API calls. If the account is yours, connect it with OAuth (Providers, Connect) or contact support.$msg$, updated_at = now()
       where c.provider = v_provider and c.account_ref = v_account and c.verified_by = 'pasted_key' and c.tenant_id <> v_tenant;
      get diagnostics v_released = row_count;
      return v_released;
    end $_$;

CREATE FUNCTION public.take_client_tokens(p_tenant uuid, p_buckets text[], p_caps double precision[], p_rates double precision[]) RETURNS TABLE(ok boolean, levels double precision[])
    LANGUAGE plpgsql
    AS $$
    declare
      i int;
      lvl float8;
      lv float8[] := '{}';
      all_ok boolean := true;
    begin
      for i in 1 .. array_length(p_buckets, 1) loop
        select least(p_caps[i], b.tokens + extract(epoch from (clock_timestamp() - b.refreshed_at)) * p_rates[i]) into lvl
          from client_rate_limit_buckets b where b.tenant_id = p_tenant and b.bucket = p_buckets[i] for update;
        if not found then lvl := p_caps[i]; end if;
        lv := lv || lvl;
        if lvl < 1 then all_ok := false; end if;
      end loop;
      if not all_ok then
        return query select false, lv;
        return;
      end if;
      for i in 1 .. array_length(p_buckets, 1) loop
        insert into client_rate_limit_buckets as b (tenant_id, bucket, tokens, refreshed_at)
          values (p_tenant, p_buckets[i], p_caps[i] - 1, clock_timestamp())
          on conflict (tenant_id, bucket) do update
            set tokens = least(p_caps[i], b.tokens + extract(epoch from (clock_timestamp() - b.refreshed_at)) * p_rates[i]) - 1,
                refreshed_at = clock_timestamp()
          returning b.tokens into lvl;
        lv[i] := lvl;
      end loop;
      return query select true, lv;
    end $$;

CREATE FUNCTION public.team_invitation_tenant(p_hash text) RETURNS uuid
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
      select (array_agg(i.tenant_id))[1] from team_invitations i
       where i.token_hash = p_hash and i.accepted_at is null and i.revoked_at is null and i.expires_at > now()
      having count(*) = 1
    $$;

CREATE TABLE public.api_keys (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    tenant_id uuid NOT NULL,
    name text DEFAULT ''::text NOT NULL,
    key_hash text NOT NULL,
    key_hint text NOT NULL,
    scopes text[] NOT NULL,
    expires_at timestamp with time zone,
    revoked_at timestamp with time zone,
    last_used_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    updated_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    require_approval boolean DEFAULT false NOT NULL
);

ALTER TABLE ONLY public.api_keys FORCE ROW LEVEL SECURITY;

CREATE TABLE public.app_providers (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    tenant_id uuid NOT NULL,
    app_id uuid NOT NULL,
    connection_id uuid NOT NULL,
    provider text NOT NULL,
    created_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    updated_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    CONSTRAINT app_providers_provider_check CHECK ((provider = ANY (ARRAY['psp_a'::text, 'psp_b'::text, 'psp_c'::text, 'store_android'::text, 'store_ios'::text])))
);

ALTER TABLE ONLY public.app_providers FORCE ROW LEVEL SECURITY;

CREATE TABLE public.apps (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    tenant_id uuid NOT NULL,
    name text NOT NULL,
    bundle_id text,
    publishable_key_test text NOT NULL,
    publishable_key_live text NOT NULL,
    created_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    updated_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL
);

ALTER TABLE ONLY public.apps FORCE ROW LEVEL SECURITY;

CREATE TABLE public.audit_entries (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    tenant_id uuid NOT NULL,
    action text NOT NULL,
    actor_type text NOT NULL,
    actor_id text,
    request_id text,
    outcome text NOT NULL,
    detail jsonb,
    created_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    updated_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL
);

ALTER TABLE ONLY public.audit_entries FORCE ROW LEVEL SECURITY;

CREATE TABLE public.chart_customer_facts (
    tenant_id uuid NOT NULL,
    customer text NOT NULL,
    computed_at bigint NOT NULL
);

ALTER TABLE ONLY public.chart_customer_facts FORCE ROW LEVEL SECURITY;

CREATE TABLE public.chart_day_sums (
    tenant_id uuid NOT NULL,
    pattern smallint NOT NULL,
    mode text NOT NULL,
    provider_key text NOT NULL,
    product text NOT NULL,
    country text NOT NULL,
    day date NOT NULL,
    currency text NOT NULL,
    charged text NOT NULL,
    paying bigint DEFAULT 0 NOT NULL,
    priced bigint DEFAULT 0 NOT NULL,
    trialing bigint DEFAULT 0 NOT NULL,
    mrr12 bigint DEFAULT 0 NOT NULL,
    new12 bigint DEFAULT 0 NOT NULL,
    expansion12 bigint DEFAULT 0 NOT NULL,
    contraction12 bigint DEFAULT 0 NOT NULL,
    churned12 bigint DEFAULT 0 NOT NULL,
    reactivated12 bigint DEFAULT 0 NOT NULL,
    churned bigint DEFAULT 0 NOT NULL,
    trials bigint DEFAULT 0 NOT NULL,
    converted bigint DEFAULT 0 NOT NULL,
    refunds bigint DEFAULT 0 NOT NULL,
    charges bigint DEFAULT 0 NOT NULL,
    revenue bigint DEFAULT 0 NOT NULL,
    items bigint DEFAULT 0 NOT NULL,
    CONSTRAINT chart_day_sums_mode_check CHECK ((mode = ANY (ARRAY['live'::text, 'test'::text])))
);

ALTER TABLE ONLY public.chart_day_sums FORCE ROW LEVEL SECURITY;

CREATE TABLE public.chart_fold_state (
    tenant_id uuid NOT NULL,
    folded_at timestamp with time zone NOT NULL
);

ALTER TABLE ONLY public.chart_fold_state FORCE ROW LEVEL SECURITY;

CREATE TABLE public.chart_ltv_sums (
    tenant_id uuid NOT NULL,
    mode text NOT NULL,
    provider_key text NOT NULL,
    product text NOT NULL,
    country text NOT NULL,
    day date NOT NULL,
    currency text NOT NULL,
    customers bigint DEFAULT 0 NOT NULL,
    revenue bigint DEFAULT 0 NOT NULL,
    items bigint DEFAULT 0 NOT NULL,
    CONSTRAINT chart_ltv_sums_mode_check CHECK ((mode = ANY (ARRAY['live'::text, 'test'::text])))
);

ALTER TABLE ONLY public.chart_ltv_sums FORCE ROW LEVEL SECURITY;

CREATE TABLE public.chart_pending (
    tenant_id uuid NOT NULL,
    subscription_id uuid
);

ALTER TABLE ONLY public.chart_pending FORCE ROW LEVEL SECURITY;

CREATE TABLE public.chart_retention_sums (
    tenant_id uuid NOT NULL,
    pattern smallint NOT NULL,
    mode text NOT NULL,
    provider_key text NOT NULL,
    product text NOT NULL,
    country text NOT NULL,
    cohort date NOT NULL,
    month date NOT NULL,
    size bigint DEFAULT 0 NOT NULL,
    retained bigint DEFAULT 0 NOT NULL,
    CONSTRAINT chart_retention_sums_mode_check CHECK ((mode = ANY (ARRAY['live'::text, 'test'::text])))
);

ALTER TABLE ONLY public.chart_retention_sums FORCE ROW LEVEL SECURITY;

CREATE TABLE public.chart_subscription_facts (
    tenant_id uuid NOT NULL,
    subscription_id uuid NOT NULL,
    mode text NOT NULL,
    provider text NOT NULL,
    product text NOT NULL,
    country text NOT NULL,
    customer text NOT NULL,
    history jsonb NOT NULL,
    computed_at bigint NOT NULL,
    due timestamp with time zone,
    CONSTRAINT chart_subscription_facts_mode_check CHECK ((mode = ANY (ARRAY['live'::text, 'test'::text]))),
    CONSTRAINT chart_subscription_facts_provider_check CHECK ((provider = ANY (ARRAY['psp_a'::text, 'psp_b'::text, 'psp_c'::text, 'store_android'::text, 'store_ios'::text])))
);

ALTER TABLE ONLY public.chart_subscription_facts FORCE ROW LEVEL SECURITY;

CREATE UNLOGGED TABLE public.client_rate_limit_buckets (
    tenant_id uuid NOT NULL,
    bucket text NOT NULL,
    tokens double precision NOT NULL,
    refreshed_at timestamp with time zone DEFAULT now() NOT NULL
);

ALTER TABLE ONLY public.client_rate_limit_buckets FORCE ROW LEVEL SECURITY;

CREATE TABLE public.coupon_counterparts (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    tenant_id uuid NOT NULL,
    coupon_id uuid NOT NULL,
    provider text NOT NULL,
    kind text NOT NULL,
    external_id text NOT NULL,
    created_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    updated_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    CONSTRAINT coupon_counterparts_provider_check CHECK ((provider = ANY (ARRAY['psp_a'::text, 'psp_b'::text, 'psp_c'::text, 'store_android'::text, 'store_ios'::text])))
);

ALTER TABLE ONLY public.coupon_counterparts FORCE ROW LEVEL SECURITY;

CREATE TABLE public.coupons (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    tenant_id uuid NOT NULL,
    code text NOT NULL,
    percent_off integer,
    amount_off_minor bigint,
    currency text,
    duration text DEFAULT 'once'::text NOT NULL,
    active boolean DEFAULT true NOT NULL,
    created_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    updated_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL
);

ALTER TABLE ONLY public.coupons FORCE ROW LEVEL SECURITY;

CREATE TABLE public.customer_event_sequences (
    tenant_id uuid NOT NULL,
    subject text NOT NULL,
    seq bigint NOT NULL
);

ALTER TABLE ONLY public.customer_event_sequences FORCE ROW LEVEL SECURITY;

CREATE TABLE public.dashboard_login_attempts (
    key text NOT NULL,
    failures integer DEFAULT 0 NOT NULL,
    window_started_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL
);

CREATE TABLE public.dashboard_sessions (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    tenant_id uuid NOT NULL,
    user_id uuid NOT NULL,
    token_hash text NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    created_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    updated_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    pending_secret text
);

ALTER TABLE ONLY public.dashboard_sessions FORCE ROW LEVEL SECURITY;

CREATE TABLE public.dashboard_users (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    tenant_id uuid NOT NULL,
    email text NOT NULL,
    password_hash text NOT NULL,
    created_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    updated_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    role text DEFAULT 'owner'::text NOT NULL,
    removed_at timestamp with time zone,
    CONSTRAINT dashboard_users_role_check CHECK ((role = ANY (ARRAY['owner'::text, 'admin'::text, 'developer'::text, 'support'::text, 'viewer'::text])))
);

ALTER TABLE ONLY public.dashboard_users FORCE ROW LEVEL SECURITY;

CREATE TABLE public.entitlement_grants (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    tenant_id uuid NOT NULL,
    app_user_id text NOT NULL,
    product_id uuid NOT NULL,
    reason text NOT NULL,
    state text DEFAULT 'active'::text NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    granted_by text NOT NULL,
    revoked_by text,
    ended_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT entitlement_grants_state_check CHECK ((state = ANY (ARRAY['active'::text, 'expired'::text, 'revoked'::text])))
);

ALTER TABLE ONLY public.entitlement_grants FORCE ROW LEVEL SECURITY;

CREATE TABLE public.entitlements (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    tenant_id uuid NOT NULL,
    app_user_id text NOT NULL,
    provider text NOT NULL,
    product_id uuid,
    subscription_id uuid,
    state text NOT NULL,
    is_sandbox boolean DEFAULT false NOT NULL,
    expires_at timestamp with time zone,
    grace_until timestamp with time zone,
    created_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    updated_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    CONSTRAINT entitlements_provider_check CHECK ((provider = ANY (ARRAY['psp_a'::text, 'psp_b'::text, 'psp_c'::text, 'store_android'::text, 'store_ios'::text]))),
    CONSTRAINT entitlements_state_check CHECK ((state = ANY (ARRAY['active'::text, 'grace_period'::text, 'expired'::text, 'revoked'::text])))
);

ALTER TABLE ONLY public.entitlements FORCE ROW LEVEL SECURITY;

CREATE TABLE public.exchange_rates (
    tenant_id uuid NOT NULL,
    from_currency text NOT NULL,
    to_currency text NOT NULL,
    valid_from date NOT NULL,
    rate numeric NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT exchange_rates_from_check CHECK ((from_currency ~ '^[A-Z]{3}$'::text)),
    CONSTRAINT exchange_rates_pair_check CHECK ((from_currency <> to_currency)),
    CONSTRAINT exchange_rates_rate_check CHECK ((rate > (0)::numeric)),
    CONSTRAINT exchange_rates_to_check CHECK ((to_currency ~ '^[A-Z]{3}$'::text))
);

ALTER TABLE ONLY public.exchange_rates FORCE ROW LEVEL SECURITY;

CREATE TABLE public.held_changes (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    tenant_id uuid NOT NULL,
    operation text NOT NULL,
    input jsonb NOT NULL,
    requested_by_key uuid NOT NULL,
    surface text NOT NULL,
    plan jsonb NOT NULL,
    status text DEFAULT 'pending_approval'::text NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    decided_by_user uuid,
    decided_at timestamp with time zone,
    outcome jsonb,
    created_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    updated_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    CONSTRAINT held_changes_status_check CHECK ((status = ANY (ARRAY['pending_approval'::text, 'applied'::text, 'rejected'::text, 'expired'::text, 'stale'::text])))
);

ALTER TABLE ONLY public.held_changes FORCE ROW LEVEL SECURITY;

CREATE TABLE public.import_items (
    tenant_id uuid NOT NULL,
    import_id uuid NOT NULL,
    line integer NOT NULL,
    provider text NOT NULL,
    ref text NOT NULL,
    sealed text,
    app_user_id text,
    outcome text,
    reason text,
    CONSTRAINT import_items_outcome_check CHECK ((outcome = ANY (ARRAY['imported'::text, 'refused'::text]))),
    CONSTRAINT import_items_provider_check CHECK ((provider = ANY (ARRAY['psp_a'::text, 'psp_b'::text, 'psp_c'::text, 'store_android'::text, 'store_ios'::text])))
);

ALTER TABLE ONLY public.import_items FORCE ROW LEVEL SECURITY;

CREATE TABLE public.imports (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    tenant_id uuid NOT NULL,
    provider text,
    source text NOT NULL,
    status text DEFAULT 'running'::text NOT NULL,
    pages integer DEFAULT 0 NOT NULL,
    next_cursor text,
    failure text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    finished_at timestamp with time zone,
    trigger text DEFAULT 'request'::text NOT NULL,
    connection_id uuid,
    CONSTRAINT imports_provider_check CHECK ((provider = ANY (ARRAY['psp_a'::text, 'psp_b'::text, 'psp_c'::text, 'store_android'::text, 'store_ios'::text]))),
    CONSTRAINT imports_source_check CHECK ((source = ANY (ARRAY['provider_api'::text, 'file'::text, 'revenuecat'::text]))),
    CONSTRAINT imports_status_check CHECK ((status = ANY (ARRAY['running'::text, 'succeeded'::text, 'failed'::text]))),
    CONSTRAINT imports_trigger_check CHECK ((trigger = ANY (ARRAY['request'::text, 'connection_proven'::text])))
);

ALTER TABLE ONLY public.imports FORCE ROW LEVEL SECURITY;

CREATE TABLE public.outbound_attempts (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    tenant_id uuid NOT NULL,
    delivery_id uuid NOT NULL,
    attempt integer NOT NULL,
    status_code integer,
    latency_ms integer NOT NULL,
    response_excerpt text,
    error text,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);

ALTER TABLE ONLY public.outbound_attempts FORCE ROW LEVEL SECURITY;

CREATE TABLE public.outbound_deliveries (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    tenant_id uuid NOT NULL,
    event_id uuid NOT NULL,
    endpoint_id uuid NOT NULL,
    status text DEFAULT 'pending'::text NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    last_status_code integer,
    reason text,
    delivered_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    seq bigint NOT NULL,
    next_attempt_at timestamp with time zone DEFAULT now() NOT NULL,
    window_started_at timestamp with time zone,
    CONSTRAINT outbound_deliveries_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'succeeded'::text, 'failed'::text])))
);

ALTER TABLE ONLY public.outbound_deliveries FORCE ROW LEVEL SECURITY;

ALTER TABLE public.outbound_deliveries ALTER COLUMN seq ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.outbound_deliveries_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE public.outbound_drains (
    endpoint_id uuid NOT NULL,
    tenant_id uuid NOT NULL,
    lease_until timestamp with time zone NOT NULL,
    posting boolean DEFAULT true NOT NULL,
    waiting_since timestamp with time zone
);

ALTER TABLE ONLY public.outbound_drains FORCE ROW LEVEL SECURITY;

CREATE TABLE public.outbound_events (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    tenant_id uuid NOT NULL,
    type text NOT NULL,
    order_key text NOT NULL,
    body jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);

ALTER TABLE ONLY public.outbound_events FORCE ROW LEVEL SECURITY;

CREATE TABLE public.outbound_outbox (
    id bigint NOT NULL,
    delivery_id uuid NOT NULL,
    task_queue text NOT NULL,
    handover jsonb NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    next_attempt_at timestamp with time zone DEFAULT now() NOT NULL,
    last_error text,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);

CREATE SEQUENCE public.outbound_outbox_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.outbound_outbox_id_seq OWNED BY public.outbound_outbox.id;

CREATE TABLE public.overview_change_days (
    tenant_id uuid NOT NULL,
    mode text NOT NULL,
    provider text NOT NULL,
    day date NOT NULL,
    changes integer NOT NULL,
    new_trials integer NOT NULL,
    conversions integer NOT NULL,
    cancellations integer NOT NULL,
    refunds integer NOT NULL,
    active_delta integer NOT NULL,
    CONSTRAINT overview_change_days_mode_check CHECK ((mode = ANY (ARRAY['live'::text, 'test'::text]))),
    CONSTRAINT overview_change_days_provider_check CHECK ((provider = ANY (ARRAY['psp_a'::text, 'psp_b'::text, 'psp_c'::text, 'store_android'::text, 'store_ios'::text])))
);

ALTER TABLE ONLY public.overview_change_days FORCE ROW LEVEL SECURITY;

CREATE TABLE public.overview_entitlement_counts (
    tenant_id uuid NOT NULL,
    is_sandbox boolean NOT NULL,
    provider text NOT NULL,
    state text NOT NULL,
    n bigint NOT NULL,
    CONSTRAINT overview_entitlement_counts_provider_check CHECK ((provider = ANY (ARRAY['psp_a'::text, 'psp_b'::text, 'psp_c'::text, 'store_android'::text, 'store_ios'::text])))
);

ALTER TABLE ONLY public.overview_entitlement_counts FORCE ROW LEVEL SECURITY;

CREATE TABLE public.overview_subscription_counts (
    tenant_id uuid NOT NULL,
    mode text NOT NULL,
    provider text NOT NULL,
    status text NOT NULL,
    product_id uuid,
    n bigint NOT NULL,
    CONSTRAINT overview_subscription_counts_mode_check CHECK ((mode = ANY (ARRAY['live'::text, 'test'::text]))),
    CONSTRAINT overview_subscription_counts_provider_check CHECK ((provider = ANY (ARRAY['psp_a'::text, 'psp_b'::text, 'psp_c'::text, 'store_android'::text, 'store_ios'::text])))
);

ALTER TABLE ONLY public.overview_subscription_counts FORCE ROW LEVEL SECURITY;

CREATE TABLE public.payment_links (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    tenant_id uuid NOT NULL,
    app_id uuid NOT NULL,
    product_id uuid NOT NULL,
    connection_id uuid,
    provider text NOT NULL,
    mode text NOT NULL,
    external_id text NOT NULL,
    url text NOT NULL,
    created_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    updated_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    CONSTRAINT payment_links_mode_check CHECK ((mode = ANY (ARRAY['live'::text, 'test'::text]))),
    CONSTRAINT payment_links_provider_check CHECK ((provider = ANY (ARRAY['psp_a'::text, 'psp_b'::text, 'psp_c'::text, 'store_android'::text, 'store_ios'::text])))
);

ALTER TABLE ONLY public.payment_links FORCE ROW LEVEL SECURITY;

CREATE TABLE public.paywalls (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    tenant_id uuid NOT NULL,
    config jsonb NOT NULL,
    published_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    updated_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    published_config jsonb
);

ALTER TABLE ONLY public.paywalls FORCE ROW LEVEL SECURITY;

CREATE TABLE public.prices (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    tenant_id uuid NOT NULL,
    product_id uuid NOT NULL,
    country text NOT NULL,
    currency text NOT NULL,
    amount_minor bigint NOT NULL,
    created_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    updated_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL
);

ALTER TABLE ONLY public.prices FORCE ROW LEVEL SECURITY;

CREATE TABLE public.product_provider_refs (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    tenant_id uuid NOT NULL,
    product_id uuid NOT NULL,
    provider text NOT NULL,
    mode text NOT NULL,
    external_id text NOT NULL,
    synced_version integer NOT NULL,
    synced_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    created_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    updated_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    CONSTRAINT product_provider_refs_mode_check CHECK ((mode = ANY (ARRAY['live'::text, 'test'::text]))),
    CONSTRAINT product_provider_refs_provider_check CHECK ((provider = ANY (ARRAY['psp_a'::text, 'psp_b'::text, 'psp_c'::text, 'store_android'::text, 'store_ios'::text])))
);

ALTER TABLE ONLY public.product_provider_refs FORCE ROW LEVEL SECURITY;

CREATE TABLE public.products (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    tenant_id uuid NOT NULL,
    app_id uuid,
    sku text NOT NULL,
    name text DEFAULT ''::text NOT NULL,
    type text DEFAULT 'subscription'::text NOT NULL,
    kind text DEFAULT 'digital'::text NOT NULL,
    tier text,
    android_store_product_id text,
    ios_store_product_id text,
    trial_per_platform jsonb,
    active boolean DEFAULT true NOT NULL,
    version integer DEFAULT 1 NOT NULL,
    retired_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    updated_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    CONSTRAINT products_kind_check CHECK ((kind = ANY (ARRAY['digital'::text, 'physical'::text]))),
    CONSTRAINT products_tier_check CHECK ((tier = ANY (ARRAY['weekly'::text, 'monthly'::text, 'quarterly'::text, 'annual'::text])))
);

ALTER TABLE ONLY public.products FORCE ROW LEVEL SECURITY;

CREATE TABLE public.provider_connections (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    tenant_id uuid NOT NULL,
    provider text NOT NULL,
    account_ref text NOT NULL,
    label text DEFAULT ''::text NOT NULL,
    is_default boolean DEFAULT false NOT NULL,
    is_active boolean DEFAULT true NOT NULL,
    credential_test_enc text,
    credential_live_enc text,
    webhook_secret_enc text,
    created_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    updated_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    verified_at timestamp with time zone,
    verified_by text,
    proof_checked_at timestamp with time zone,
    proof_error text,
    CONSTRAINT provider_connections_provider_check CHECK ((provider = ANY (ARRAY['psp_a'::text, 'psp_b'::text, 'psp_c'::text, 'store_android'::text, 'store_ios'::text]))),
    CONSTRAINT provider_connections_verified_by_check CHECK ((verified_by = ANY (ARRAY['oauth'::text, 'provider_call'::text, 'control_api'::text, 'pasted_key'::text]))),
    CONSTRAINT provider_connections_verified_by_set CHECK (((verified_at IS NULL) = (verified_by IS NULL)))
);

ALTER TABLE ONLY public.provider_connections FORCE ROW LEVEL SECURITY;

CREATE TABLE public.provider_plans (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    tenant_id uuid NOT NULL,
    app_id uuid NOT NULL,
    product_id uuid NOT NULL,
    connection_id uuid,
    provider text NOT NULL,
    mode text NOT NULL,
    external_id text NOT NULL,
    created_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    updated_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    CONSTRAINT provider_plans_mode_check CHECK ((mode = ANY (ARRAY['live'::text, 'test'::text]))),
    CONSTRAINT provider_plans_provider_check CHECK ((provider = ANY (ARRAY['psp_a'::text, 'psp_b'::text, 'psp_c'::text, 'store_android'::text, 'store_ios'::text])))
);

ALTER TABLE ONLY public.provider_plans FORCE ROW LEVEL SECURITY;

CREATE TABLE public.provisional_access (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    tenant_id uuid NOT NULL,
    provider text NOT NULL,
    kind text NOT NULL,
    customer_key text NOT NULL,
    app_user_id text,
    product_id uuid,
    is_sandbox boolean DEFAULT false NOT NULL,
    delivery_id uuid,
    event_at timestamp with time zone NOT NULL,
    expires_at timestamp with time zone,
    state text DEFAULT 'provisional'::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT provisional_access_check CHECK (((kind = 'grant'::text) = ((app_user_id IS NOT NULL) AND (product_id IS NOT NULL) AND (expires_at IS NOT NULL)))),
    CONSTRAINT provisional_access_kind_check CHECK ((kind = ANY (ARRAY['grant'::text, 'stop'::text]))),
    CONSTRAINT provisional_access_provider_check CHECK ((provider = ANY (ARRAY['psp_a'::text, 'psp_b'::text, 'psp_c'::text, 'store_android'::text, 'store_ios'::text]))),
    CONSTRAINT provisional_access_state_check CHECK ((state = ANY (ARRAY['provisional'::text, 'unconfirmed'::text, 'withdrawn'::text])))
);

ALTER TABLE ONLY public.provisional_access FORCE ROW LEVEL SECURITY;

CREATE UNLOGGED TABLE public.rate_limit_buckets (
    tenant_id uuid NOT NULL,
    tokens double precision NOT NULL,
    refreshed_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL
)
WITH (fillfactor='50');

ALTER TABLE ONLY public.rate_limit_buckets FORCE ROW LEVEL SECURITY;

CREATE TABLE public.reconciliation_settings (
    tenant_id uuid NOT NULL,
    enabled boolean DEFAULT true NOT NULL,
    web_interval_minutes integer DEFAULT 60 NOT NULL,
    stores_interval_minutes integer DEFAULT 1440 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT reconciliation_settings_stores_check CHECK (((stores_interval_minutes >= 60) AND (stores_interval_minutes <= 10080))),
    CONSTRAINT reconciliation_settings_web_check CHECK (((web_interval_minutes >= 15) AND (web_interval_minutes <= 1440)))
);

ALTER TABLE ONLY public.reconciliation_settings FORCE ROW LEVEL SECURITY;

CREATE TABLE public.reconciliations (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    tenant_id uuid NOT NULL,
    run_id uuid NOT NULL,
    provider text NOT NULL,
    subscription_external_id text NOT NULL,
    app_user_id text,
    held jsonb,
    provider_state jsonb NOT NULL,
    applied jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    workflow_id text,
    CONSTRAINT reconciliations_provider_check CHECK ((provider = ANY (ARRAY['psp_a'::text, 'psp_b'::text, 'psp_c'::text, 'store_android'::text, 'store_ios'::text])))
);

ALTER TABLE ONLY public.reconciliations FORCE ROW LEVEL SECURITY;

CREATE TABLE public.store_purchase_misses (
    tenant_id uuid NOT NULL,
    provider text NOT NULL,
    token_hash text NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    CONSTRAINT store_purchase_misses_provider_check CHECK ((provider = ANY (ARRAY['psp_a'::text, 'psp_b'::text, 'psp_c'::text, 'store_android'::text, 'store_ios'::text])))
);

ALTER TABLE ONLY public.store_purchase_misses FORCE ROW LEVEL SECURITY;

CREATE TABLE public.store_purchase_tokens (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    tenant_id uuid NOT NULL,
    provider text NOT NULL,
    token_hash text NOT NULL,
    app_user_id text NOT NULL,
    product_id uuid,
    entitlement_id uuid,
    created_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    updated_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    subscription_id uuid,
    purchase_token_enc text,
    CONSTRAINT store_purchase_tokens_provider_check CHECK ((provider = ANY (ARRAY['psp_a'::text, 'psp_b'::text, 'psp_c'::text, 'store_android'::text, 'store_ios'::text])))
);

ALTER TABLE ONLY public.store_purchase_tokens FORCE ROW LEVEL SECURITY;

CREATE TABLE public.subscription_changes (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    tenant_id uuid NOT NULL,
    subscription_id uuid NOT NULL,
    provider text NOT NULL,
    mode text NOT NULL,
    from_status text,
    to_status text NOT NULL,
    changed_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    CONSTRAINT subscription_changes_mode_check CHECK ((mode = ANY (ARRAY['live'::text, 'test'::text]))),
    CONSTRAINT subscription_changes_provider_check CHECK ((provider = ANY (ARRAY['psp_a'::text, 'psp_b'::text, 'psp_c'::text, 'store_android'::text, 'store_ios'::text])))
);

ALTER TABLE ONLY public.subscription_changes FORCE ROW LEVEL SECURITY;

CREATE TABLE public.subscription_product_changes (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    tenant_id uuid NOT NULL,
    subscription_id uuid NOT NULL,
    product_id uuid,
    changed_at timestamp with time zone DEFAULT now() NOT NULL
);

ALTER TABLE ONLY public.subscription_product_changes FORCE ROW LEVEL SECURITY;

CREATE TABLE public.subscriptions (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    tenant_id uuid NOT NULL,
    app_user_id text,
    email text,
    provider text NOT NULL,
    mode text NOT NULL,
    status text NOT NULL,
    product_id uuid,
    external_id text NOT NULL,
    customer_external_id text,
    trial_started_at timestamp with time zone,
    trial_ended_at timestamp with time zone,
    current_period_end timestamp with time zone,
    canceled_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    updated_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    store_read_at timestamp with time zone,
    superseded_by text,
    country text,
    status_since timestamp with time zone,
    CONSTRAINT subscriptions_country_check CHECK ((country ~ '^[A-Z]{2}$'::text)),
    CONSTRAINT subscriptions_mode_check CHECK ((mode = ANY (ARRAY['live'::text, 'test'::text]))),
    CONSTRAINT subscriptions_provider_check CHECK ((provider = ANY (ARRAY['psp_a'::text, 'psp_b'::text, 'psp_c'::text, 'store_android'::text, 'store_ios'::text]))),
    CONSTRAINT subscriptions_status_check CHECK ((status = ANY (ARRAY['trialing'::text, 'active'::text, 'past_due'::text, 'canceled'::text, 'refunded'::text, 'expired'::text])))
);

ALTER TABLE ONLY public.subscriptions FORCE ROW LEVEL SECURITY;

CREATE TABLE public.sync_events (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    tenant_id uuid NOT NULL,
    run_id uuid NOT NULL,
    provider text NOT NULL,
    status text NOT NULL,
    reason text,
    detail jsonb,
    created_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    updated_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    CONSTRAINT sync_events_provider_check CHECK ((provider = ANY (ARRAY['psp_a'::text, 'psp_b'::text, 'psp_c'::text, 'store_android'::text, 'store_ios'::text])))
);

ALTER TABLE ONLY public.sync_events FORCE ROW LEVEL SECURITY;

CREATE TABLE public.sync_runs (
    id uuid NOT NULL,
    tenant_id uuid NOT NULL,
    kind text DEFAULT 'sync'::text NOT NULL,
    status text DEFAULT 'running'::text NOT NULL,
    confirm_count integer,
    requested_by text,
    result jsonb,
    finished_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    updated_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    workflow_id text,
    CONSTRAINT sync_runs_kind_check CHECK ((kind = ANY (ARRAY['sync'::text, 'product-sync'::text]))),
    CONSTRAINT sync_runs_status_check CHECK ((status = ANY (ARRAY['running'::text, 'succeeded'::text, 'failed'::text])))
);

ALTER TABLE ONLY public.sync_runs FORCE ROW LEVEL SECURITY;

CREATE TABLE public.team_invitations (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    tenant_id uuid NOT NULL,
    email text NOT NULL,
    role text NOT NULL,
    token_hash text NOT NULL,
    invited_by uuid,
    expires_at timestamp with time zone NOT NULL,
    accepted_at timestamp with time zone,
    accepted_by uuid,
    revoked_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    updated_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    CONSTRAINT team_invitations_role_check CHECK ((role = ANY (ARRAY['owner'::text, 'admin'::text, 'developer'::text, 'support'::text, 'viewer'::text])))
);

ALTER TABLE ONLY public.team_invitations FORCE ROW LEVEL SECURITY;

CREATE TABLE public.tenants (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    name text NOT NULL,
    plan text DEFAULT 'free'::text NOT NULL,
    subscriber_limit integer DEFAULT 1000 NOT NULL,
    is_demo boolean DEFAULT false NOT NULL,
    created_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    updated_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    outbound_readiness jsonb
);

ALTER TABLE ONLY public.tenants FORCE ROW LEVEL SECURITY;

CREATE TABLE public.webhook_deliveries (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    tenant_id uuid,
    provider text NOT NULL,
    event_id text NOT NULL,
    event_type text NOT NULL,
    mode text,
    status text DEFAULT 'received'::text NOT NULL,
    reason text,
    payload jsonb NOT NULL,
    delivery_count integer DEFAULT 1 NOT NULL,
    processed_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    updated_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    buyer_email text,
    subscription_id uuid,
    premium_at timestamp with time zone,
    CONSTRAINT webhook_deliveries_mode_check CHECK (((mode IS NULL) OR (mode = ANY (ARRAY['live'::text, 'test'::text])))),
    CONSTRAINT webhook_deliveries_provider_check CHECK ((provider = ANY (ARRAY['psp_a'::text, 'psp_b'::text, 'psp_c'::text, 'store_android'::text, 'store_ios'::text]))),
    CONSTRAINT webhook_deliveries_status_check CHECK ((status = ANY (ARRAY['received'::text, 'processed'::text, 'failed'::text])))
);

ALTER TABLE ONLY public.webhook_deliveries FORCE ROW LEVEL SECURITY;

CREATE TABLE public.webhook_endpoints (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    tenant_id uuid NOT NULL,
    url text NOT NULL,
    description text,
    event_types text[] DEFAULT '{}'::text[] NOT NULL,
    enabled boolean DEFAULT true NOT NULL,
    disabled_reason text,
    secret_enc text NOT NULL,
    previous_secret_enc text,
    previous_secret_expires_at timestamp with time zone,
    secret_rotated_at timestamp with time zone,
    task_queue text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    drain_width smallint DEFAULT 8 NOT NULL,
    CONSTRAINT webhook_endpoints_drain_width_check CHECK (((drain_width >= 1) AND (drain_width <= 8)))
);

ALTER TABLE ONLY public.webhook_endpoints FORCE ROW LEVEL SECURITY;

CREATE TABLE public.webhook_outbox (
    id bigint NOT NULL,
    delivery_id uuid NOT NULL,
    handover jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    task_queue text NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    next_attempt_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    last_error text
);

CREATE SEQUENCE public.webhook_outbox_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.webhook_outbox_id_seq OWNED BY public.webhook_outbox.id;

ALTER TABLE ONLY public.outbound_outbox ALTER COLUMN id SET DEFAULT nextval('public.outbound_outbox_id_seq'::regclass);

ALTER TABLE ONLY public.webhook_outbox ALTER COLUMN id SET DEFAULT nextval('public.webhook_outbox_id_seq'::regclass);

ALTER TABLE ONLY public.api_keys
    ADD CONSTRAINT api_keys_key_hash_unique UNIQUE (key_hash);

ALTER TABLE ONLY public.api_keys
    ADD CONSTRAINT api_keys_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.app_providers
    ADD CONSTRAINT app_providers_app_id_provider_unique UNIQUE (app_id, provider);

ALTER TABLE ONLY public.app_providers
    ADD CONSTRAINT app_providers_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.apps
    ADD CONSTRAINT apps_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.apps
    ADD CONSTRAINT apps_publishable_key_live_unique UNIQUE (publishable_key_live);

ALTER TABLE ONLY public.apps
    ADD CONSTRAINT apps_publishable_key_test_unique UNIQUE (publishable_key_test);

ALTER TABLE ONLY public.apps
    ADD CONSTRAINT apps_tenant_id_name_unique UNIQUE (tenant_id, name);

ALTER TABLE ONLY public.audit_entries
    ADD CONSTRAINT audit_entries_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.chart_customer_facts
    ADD CONSTRAINT chart_customer_facts_pkey PRIMARY KEY (tenant_id, customer);

ALTER TABLE ONLY public.chart_fold_state
    ADD CONSTRAINT chart_fold_state_pkey PRIMARY KEY (tenant_id);

ALTER TABLE ONLY public.chart_subscription_facts
    ADD CONSTRAINT chart_subscription_facts_pkey PRIMARY KEY (tenant_id, subscription_id);

ALTER TABLE ONLY public.client_rate_limit_buckets
    ADD CONSTRAINT client_rate_limit_buckets_pkey PRIMARY KEY (tenant_id, bucket);

ALTER TABLE ONLY public.coupon_counterparts
    ADD CONSTRAINT coupon_counterparts_coupon_id_provider_unique UNIQUE (coupon_id, provider);

ALTER TABLE ONLY public.coupon_counterparts
    ADD CONSTRAINT coupon_counterparts_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.coupons
    ADD CONSTRAINT coupons_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.coupons
    ADD CONSTRAINT coupons_tenant_id_code_unique UNIQUE (tenant_id, code);

ALTER TABLE ONLY public.customer_event_sequences
    ADD CONSTRAINT customer_event_sequences_pkey PRIMARY KEY (tenant_id, subject);

ALTER TABLE ONLY public.dashboard_login_attempts
    ADD CONSTRAINT dashboard_login_attempts_pkey PRIMARY KEY (key);

ALTER TABLE ONLY public.dashboard_sessions
    ADD CONSTRAINT dashboard_sessions_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.dashboard_sessions
    ADD CONSTRAINT dashboard_sessions_token_hash_unique UNIQUE (token_hash);

ALTER TABLE ONLY public.dashboard_users
    ADD CONSTRAINT dashboard_users_email_unique UNIQUE (email);

ALTER TABLE ONLY public.dashboard_users
    ADD CONSTRAINT dashboard_users_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.entitlement_grants
    ADD CONSTRAINT entitlement_grants_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.entitlements
    ADD CONSTRAINT entitlements_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.exchange_rates
    ADD CONSTRAINT exchange_rates_pkey PRIMARY KEY (tenant_id, from_currency, to_currency, valid_from);

ALTER TABLE ONLY public.held_changes
    ADD CONSTRAINT held_changes_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.import_items
    ADD CONSTRAINT import_items_pkey PRIMARY KEY (tenant_id, import_id, line);

ALTER TABLE ONLY public.imports
    ADD CONSTRAINT imports_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.imports
    ADD CONSTRAINT imports_tenant_id_id_key UNIQUE (tenant_id, id);

ALTER TABLE ONLY public.outbound_attempts
    ADD CONSTRAINT outbound_attempts_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.outbound_deliveries
    ADD CONSTRAINT outbound_deliveries_event_id_endpoint_id_key UNIQUE (event_id, endpoint_id);

ALTER TABLE ONLY public.outbound_deliveries
    ADD CONSTRAINT outbound_deliveries_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.outbound_drains
    ADD CONSTRAINT outbound_drains_pkey PRIMARY KEY (endpoint_id);

ALTER TABLE ONLY public.outbound_events
    ADD CONSTRAINT outbound_events_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.outbound_outbox
    ADD CONSTRAINT outbound_outbox_delivery_id_key UNIQUE (delivery_id);

ALTER TABLE ONLY public.outbound_outbox
    ADD CONSTRAINT outbound_outbox_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.payment_links
    ADD CONSTRAINT payment_links_app_id_product_id_provider_mode_unique UNIQUE (app_id, product_id, provider, mode);

ALTER TABLE ONLY public.payment_links
    ADD CONSTRAINT payment_links_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.paywalls
    ADD CONSTRAINT paywalls_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.paywalls
    ADD CONSTRAINT paywalls_tenant_id_unique UNIQUE (tenant_id);

ALTER TABLE ONLY public.prices
    ADD CONSTRAINT prices_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.prices
    ADD CONSTRAINT prices_product_id_country_currency_unique UNIQUE (product_id, country, currency);

ALTER TABLE ONLY public.product_provider_refs
    ADD CONSTRAINT product_provider_refs_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.product_provider_refs
    ADD CONSTRAINT product_provider_refs_product_id_provider_mode_unique UNIQUE (product_id, provider, mode);

ALTER TABLE ONLY public.products
    ADD CONSTRAINT products_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.products
    ADD CONSTRAINT products_tenant_id_id_key UNIQUE (tenant_id, id);

ALTER TABLE ONLY public.products
    ADD CONSTRAINT products_tenant_id_sku_unique UNIQUE (tenant_id, sku);

ALTER TABLE ONLY public.provider_connections
    ADD CONSTRAINT provider_connections_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.provider_plans
    ADD CONSTRAINT provider_plans_app_id_product_id_provider_mode_unique UNIQUE (app_id, product_id, provider, mode);

ALTER TABLE ONLY public.provider_plans
    ADD CONSTRAINT provider_plans_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.provisional_access
    ADD CONSTRAINT provisional_access_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.rate_limit_buckets
    ADD CONSTRAINT rate_limit_buckets_pkey PRIMARY KEY (tenant_id);

ALTER TABLE ONLY public.reconciliation_settings
    ADD CONSTRAINT reconciliation_settings_pkey PRIMARY KEY (tenant_id);

ALTER TABLE ONLY public.reconciliations
    ADD CONSTRAINT reconciliations_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.store_purchase_misses
    ADD CONSTRAINT store_purchase_misses_pkey PRIMARY KEY (tenant_id, provider, token_hash);

ALTER TABLE ONLY public.store_purchase_tokens
    ADD CONSTRAINT store_purchase_tokens_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.store_purchase_tokens
    ADD CONSTRAINT store_purchase_tokens_tenant_id_provider_token_hash_unique UNIQUE (tenant_id, provider, token_hash);

ALTER TABLE ONLY public.subscription_changes
    ADD CONSTRAINT subscription_changes_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.subscription_product_changes
    ADD CONSTRAINT subscription_product_changes_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.subscriptions
    ADD CONSTRAINT subscriptions_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.subscriptions
    ADD CONSTRAINT subscriptions_tenant_id_provider_external_id_unique UNIQUE (tenant_id, provider, external_id);

ALTER TABLE ONLY public.sync_events
    ADD CONSTRAINT sync_events_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.sync_runs
    ADD CONSTRAINT sync_runs_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.team_invitations
    ADD CONSTRAINT team_invitations_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.team_invitations
    ADD CONSTRAINT team_invitations_tenant_token_hash_key UNIQUE (tenant_id, token_hash);

ALTER TABLE ONLY public.tenants
    ADD CONSTRAINT tenants_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_tenant_id_provider_event_id_unique UNIQUE (tenant_id, provider, event_id);

ALTER TABLE ONLY public.webhook_endpoints
    ADD CONSTRAINT webhook_endpoints_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.webhook_endpoints
    ADD CONSTRAINT webhook_endpoints_tenant_id_id_key UNIQUE (tenant_id, id);

ALTER TABLE ONLY public.webhook_outbox
    ADD CONSTRAINT webhook_outbox_delivery_id_unique UNIQUE (delivery_id);

ALTER TABLE ONLY public.webhook_outbox
    ADD CONSTRAINT webhook_outbox_pkey PRIMARY KEY (id);

CREATE INDEX api_keys_tenant_id_index ON public.api_keys USING btree (tenant_id);

CREATE INDEX audit_entries_tenant_id_action_index ON public.audit_entries USING btree (tenant_id, action);

CREATE INDEX audit_entries_tenant_id_actor_type_index ON public.audit_entries USING btree (tenant_id, actor_type);

CREATE INDEX audit_entries_tenant_id_created_at_index ON public.audit_entries USING btree (tenant_id, created_at);

CREATE UNIQUE INDEX chart_day_sums_key ON public.chart_day_sums USING btree (tenant_id, mode, pattern, provider_key, product, country, day, currency, charged);

CREATE UNIQUE INDEX chart_ltv_sums_key ON public.chart_ltv_sums USING btree (tenant_id, mode, provider_key, product, country, day, currency);

CREATE INDEX chart_pending_tenant ON public.chart_pending USING btree (tenant_id);

CREATE UNIQUE INDEX chart_retention_sums_key ON public.chart_retention_sums USING btree (tenant_id, mode, pattern, provider_key, product, country, cohort, month);

CREATE INDEX chart_subscription_facts_customer ON public.chart_subscription_facts USING btree (tenant_id, customer);

CREATE INDEX chart_subscription_facts_due ON public.chart_subscription_facts USING btree (due) WHERE (due IS NOT NULL);

CREATE INDEX coupons_tenant_id_created_at_index ON public.coupons USING btree (tenant_id, created_at);

CREATE INDEX entitlement_grants_active ON public.entitlement_grants USING btree (tenant_id, app_user_id) WHERE (state = 'active'::text);

CREATE INDEX entitlement_grants_customer ON public.entitlement_grants USING btree (tenant_id, app_user_id, created_at DESC, id DESC);

CREATE INDEX entitlement_grants_list ON public.entitlement_grants USING btree (tenant_id, created_at DESC, id DESC);

CREATE UNIQUE INDEX entitlements_one_per_user_product ON public.entitlements USING btree (tenant_id, app_user_id, provider, COALESCE(product_id, '00000000-0000-0000-0000-000000000000'::uuid));

CREATE INDEX entitlements_overview ON public.entitlements USING btree (tenant_id, is_sandbox, provider, state);

CREATE INDEX entitlements_tenant_id_app_user_id_index ON public.entitlements USING btree (tenant_id, app_user_id);

CREATE INDEX entitlements_tenant_id_created_at_index ON public.entitlements USING btree (tenant_id, created_at);

CREATE INDEX entitlements_tenant_id_provider_index ON public.entitlements USING btree (tenant_id, provider);

CREATE INDEX entitlements_tenant_id_state_index ON public.entitlements USING btree (tenant_id, state);

CREATE INDEX held_changes_key ON public.held_changes USING btree (requested_by_key);

CREATE INDEX held_changes_pending ON public.held_changes USING btree (tenant_id, created_at DESC) WHERE (status = 'pending_approval'::text);

CREATE INDEX import_items_tenant_user ON public.import_items USING btree (tenant_id, app_user_id);

CREATE UNIQUE INDEX imports_once_on_proof ON public.imports USING btree (tenant_id, connection_id) WHERE (trigger = 'connection_proven'::text);

CREATE INDEX imports_tenant_created ON public.imports USING btree (tenant_id, created_at DESC, id);

CREATE INDEX outbound_attempts_list ON public.outbound_attempts USING btree (tenant_id, delivery_id, created_at DESC);

CREATE INDEX outbound_deliveries_delivered ON public.outbound_deliveries USING btree (tenant_id, delivered_at) WHERE (status = 'succeeded'::text);

CREATE INDEX outbound_deliveries_failed ON public.outbound_deliveries USING btree (tenant_id, updated_at) WHERE (status = 'failed'::text);

CREATE INDEX outbound_deliveries_list ON public.outbound_deliveries USING btree (tenant_id, created_at DESC, id DESC);

CREATE INDEX outbound_deliveries_pending ON public.outbound_deliveries USING btree (endpoint_id, seq) WHERE (status = 'pending'::text);

CREATE INDEX outbound_events_list ON public.outbound_events USING btree (tenant_id, created_at DESC, id DESC);

CREATE INDEX outbound_events_subject ON public.outbound_events USING btree (tenant_id, order_key, created_at DESC);

CREATE INDEX outbound_outbox_due ON public.outbound_outbox USING btree (task_queue, next_attempt_at);

CREATE INDEX overview_change_days_key ON public.overview_change_days USING btree (tenant_id, mode, day, provider);

CREATE INDEX overview_entitlement_counts_key ON public.overview_entitlement_counts USING btree (tenant_id, is_sandbox, provider, state);

CREATE INDEX overview_subscription_counts_key ON public.overview_subscription_counts USING btree (tenant_id, mode, provider, status, product_id);

CREATE INDEX products_tenant_id_created_at_index ON public.products USING btree (tenant_id, created_at);

CREATE INDEX products_tenant_id_type_index ON public.products USING btree (tenant_id, type);

CREATE UNIQUE INDEX provider_connections_account_per_tenant ON public.provider_connections USING btree (tenant_id, provider, account_ref);

CREATE UNIQUE INDEX provider_connections_one_default ON public.provider_connections USING btree (tenant_id, provider) WHERE is_default;

CREATE UNIQUE INDEX provider_connections_one_proven_owner ON public.provider_connections USING btree (provider, account_ref) WHERE (verified_at IS NOT NULL);

CREATE INDEX provider_connections_tenant_id_created_at_index ON public.provider_connections USING btree (tenant_id, created_at);

CREATE INDEX provider_connections_tenant_id_provider_index ON public.provider_connections USING btree (tenant_id, provider);

CREATE INDEX provisional_access_customer ON public.provisional_access USING btree (tenant_id, provider, customer_key, kind, event_at);

CREATE INDEX provisional_access_due ON public.provisional_access USING btree (expires_at) WHERE ((kind = 'grant'::text) AND (state = 'provisional'::text));

CREATE INDEX provisional_access_user ON public.provisional_access USING btree (tenant_id, app_user_id, provider, product_id) WHERE (kind = 'grant'::text);

CREATE INDEX reconciliations_tenant_created ON public.reconciliations USING btree (tenant_id, created_at DESC, id);

CREATE INDEX reconciliations_tenant_run ON public.reconciliations USING btree (tenant_id, run_id);

CREATE INDEX reconciliations_tenant_user ON public.reconciliations USING btree (tenant_id, app_user_id);

CREATE INDEX store_purchase_tokens_customer ON public.store_purchase_tokens USING btree (tenant_id, app_user_id);

CREATE INDEX subscription_changes_history ON public.subscription_changes USING btree (tenant_id, mode, subscription_id, changed_at) INCLUDE (to_status);

CREATE INDEX subscription_changes_subscription ON public.subscription_changes USING btree (subscription_id);

CREATE INDEX subscription_changes_window ON public.subscription_changes USING btree (tenant_id, mode, changed_at) INCLUDE (provider, from_status, to_status);

CREATE INDEX subscription_product_changes_history ON public.subscription_product_changes USING btree (tenant_id, subscription_id, changed_at) INCLUDE (product_id);

CREATE INDEX subscriptions_customer ON public.subscriptions USING btree (tenant_id, app_user_id);

CREATE INDEX subscriptions_overview ON public.subscriptions USING btree (tenant_id, mode, status, provider) INCLUDE (product_id);

CREATE INDEX subscriptions_tenant_id_created_at_index ON public.subscriptions USING btree (tenant_id, created_at);

CREATE INDEX subscriptions_tenant_id_email_index ON public.subscriptions USING btree (tenant_id, email);

CREATE INDEX subscriptions_tenant_id_provider_mode_index ON public.subscriptions USING btree (tenant_id, provider, mode);

CREATE INDEX subscriptions_tenant_id_status_index ON public.subscriptions USING btree (tenant_id, status);

CREATE INDEX subscriptions_tenant_period_end ON public.subscriptions USING btree (tenant_id, current_period_end) WHERE (current_period_end IS NOT NULL);

CREATE INDEX subscriptions_tenant_updated ON public.subscriptions USING btree (tenant_id, updated_at);

CREATE INDEX sync_events_tenant_id_created_at_index ON public.sync_events USING btree (tenant_id, created_at);

CREATE INDEX sync_events_tenant_id_provider_status_index ON public.sync_events USING btree (tenant_id, provider, status);

CREATE INDEX sync_events_tenant_id_run_id_index ON public.sync_events USING btree (tenant_id, run_id);

CREATE UNIQUE INDEX sync_runs_one_running ON public.sync_runs USING btree (tenant_id) WHERE (status = 'running'::text);

CREATE INDEX sync_runs_tenant_id_created_at_index ON public.sync_runs USING btree (tenant_id, created_at);

CREATE INDEX team_invitations_tenant_id_created_at_index ON public.team_invitations USING btree (tenant_id, created_at);

CREATE INDEX team_invitations_token_hash ON public.team_invitations USING btree (token_hash);

CREATE UNIQUE INDEX tenants_one_demo ON public.tenants USING btree (is_demo) WHERE is_demo;

CREATE INDEX webhook_deliveries_refusals ON public.webhook_deliveries USING btree (provider, created_at) WHERE (event_type = ANY (ARRAY['unverified'::text, 'invalid'::text]));

CREATE INDEX webhook_deliveries_subscription ON public.webhook_deliveries USING btree (subscription_id, created_at) WHERE (subscription_id IS NOT NULL);

CREATE INDEX webhook_deliveries_tenant_id_created_at_index ON public.webhook_deliveries USING btree (tenant_id, created_at);

CREATE INDEX webhook_deliveries_tenant_id_event_type_index ON public.webhook_deliveries USING btree (tenant_id, event_type);

CREATE INDEX webhook_deliveries_tenant_id_mode_index ON public.webhook_deliveries USING btree (tenant_id, mode);

CREATE INDEX webhook_deliveries_tenant_id_provider_status_index ON public.webhook_deliveries USING btree (tenant_id, provider, status);

CREATE INDEX webhook_endpoints_enabled ON public.webhook_endpoints USING btree (tenant_id) WHERE enabled;

CREATE INDEX webhook_outbox_task_queue_next_attempt_at_id_index ON public.webhook_outbox USING btree (task_queue, next_attempt_at, id);

CREATE TRIGGER chart_mark_price AFTER INSERT OR DELETE OR UPDATE ON public.prices FOR EACH ROW EXECUTE FUNCTION public.chart_mark_catalogue();

CREATE TRIGGER chart_mark_product AFTER INSERT OR DELETE OR UPDATE OF tier ON public.products FOR EACH ROW EXECUTE FUNCTION public.chart_mark_catalogue();

CREATE TRIGGER chart_mark_subscription AFTER INSERT OR DELETE ON public.subscriptions FOR EACH ROW EXECUTE FUNCTION public.chart_mark_subscription_row();

CREATE TRIGGER chart_mark_subscription_changes AFTER INSERT OR DELETE OR UPDATE ON public.subscription_changes FOR EACH ROW EXECUTE FUNCTION public.chart_mark_subscription();

CREATE TRIGGER chart_mark_subscription_product_changes AFTER INSERT OR DELETE OR UPDATE ON public.subscription_product_changes FOR EACH ROW EXECUTE FUNCTION public.chart_mark_subscription();

CREATE TRIGGER chart_mark_subscription_update AFTER UPDATE OF mode, provider, product_id, country, app_user_id, status ON public.subscriptions FOR EACH ROW WHEN (((((((old.mode IS DISTINCT FROM new.mode) OR (old.provider IS DISTINCT FROM new.provider)) OR (old.product_id IS DISTINCT FROM new.product_id)) OR (old.country IS DISTINCT FROM new.country)) OR (old.app_user_id IS DISTINCT FROM new.app_user_id)) OR (old.status IS DISTINCT FROM new.status))) EXECUTE FUNCTION public.chart_mark_subscription_row();

CREATE TRIGGER outbound_entitlement_insert AFTER INSERT ON public.entitlements FOR EACH ROW EXECUTE FUNCTION public.outbound_on_entitlement();

CREATE TRIGGER outbound_entitlement_update AFTER UPDATE OF state ON public.entitlements FOR EACH ROW WHEN ((old.state IS DISTINCT FROM new.state)) EXECUTE FUNCTION public.outbound_on_entitlement();

CREATE TRIGGER outbound_grant_insert AFTER INSERT ON public.entitlement_grants FOR EACH ROW EXECUTE FUNCTION public.outbound_on_grant();

CREATE TRIGGER outbound_grant_update AFTER UPDATE OF state ON public.entitlement_grants FOR EACH ROW WHEN ((old.state IS DISTINCT FROM new.state)) EXECUTE FUNCTION public.outbound_on_grant();

CREATE TRIGGER outbound_inbound_failed_insert AFTER INSERT ON public.webhook_deliveries FOR EACH ROW WHEN (((new.status = 'failed'::text) AND (new.tenant_id IS NOT NULL) AND (new.event_type <> 'unverified'::text))) EXECUTE FUNCTION public.outbound_on_inbound_failure();

CREATE TRIGGER outbound_inbound_failed_update AFTER UPDATE OF status ON public.webhook_deliveries FOR EACH ROW WHEN (((new.status = 'failed'::text) AND (old.status IS DISTINCT FROM 'failed'::text) AND (new.tenant_id IS NOT NULL))) EXECUTE FUNCTION public.outbound_on_inbound_failure();

CREATE TRIGGER outbound_reconciliation_insert AFTER INSERT ON public.reconciliations FOR EACH ROW EXECUTE FUNCTION public.outbound_on_reconciliation();

CREATE TRIGGER outbound_subscription_insert AFTER INSERT ON public.subscriptions FOR EACH ROW EXECUTE FUNCTION public.outbound_on_subscription();

CREATE TRIGGER outbound_subscription_update AFTER UPDATE OF status ON public.subscriptions FOR EACH ROW WHEN ((old.status IS DISTINCT FROM new.status)) EXECUTE FUNCTION public.outbound_on_subscription();

CREATE TRIGGER outbound_sync_run_finished AFTER UPDATE OF status ON public.sync_runs FOR EACH ROW WHEN (((old.status = 'running'::text) AND (new.status <> 'running'::text))) EXECUTE FUNCTION public.outbound_on_sync_run();

CREATE TRIGGER overview_change_day AFTER INSERT OR DELETE ON public.subscription_changes FOR EACH ROW EXECUTE FUNCTION public.overview_change_day();

CREATE TRIGGER overview_change_day_update AFTER UPDATE ON public.subscription_changes FOR EACH ROW WHEN (((((((old.tenant_id IS DISTINCT FROM new.tenant_id) OR (old.mode IS DISTINCT FROM new.mode)) OR (old.provider IS DISTINCT FROM new.provider)) OR (old.from_status IS DISTINCT FROM new.from_status)) OR (old.to_status IS DISTINCT FROM new.to_status)) OR (old.changed_at IS DISTINCT FROM new.changed_at))) EXECUTE FUNCTION public.overview_change_day();

CREATE TRIGGER overview_count_entitlement AFTER INSERT OR DELETE ON public.entitlements FOR EACH ROW EXECUTE FUNCTION public.overview_count_entitlement();

CREATE TRIGGER overview_count_entitlement_update AFTER UPDATE OF tenant_id, is_sandbox, provider, state ON public.entitlements FOR EACH ROW WHEN (((((old.tenant_id IS DISTINCT FROM new.tenant_id) OR (old.is_sandbox IS DISTINCT FROM new.is_sandbox)) OR (old.provider IS DISTINCT FROM new.provider)) OR (old.state IS DISTINCT FROM new.state))) EXECUTE FUNCTION public.overview_count_entitlement();

CREATE TRIGGER overview_count_subscription AFTER INSERT OR DELETE ON public.subscriptions FOR EACH ROW EXECUTE FUNCTION public.overview_count_subscription();

CREATE TRIGGER overview_count_subscription_update AFTER UPDATE OF tenant_id, mode, provider, status, product_id ON public.subscriptions FOR EACH ROW WHEN ((((((old.tenant_id IS DISTINCT FROM new.tenant_id) OR (old.mode IS DISTINCT FROM new.mode)) OR (old.provider IS DISTINCT FROM new.provider)) OR (old.status IS DISTINCT FROM new.status)) OR (old.product_id IS DISTINCT FROM new.product_id))) EXECUTE FUNCTION public.overview_count_subscription();

CREATE TRIGGER provider_connections_key_claims BEFORE INSERT OR UPDATE OF verified_by, provider ON public.provider_connections FOR EACH ROW EXECUTE FUNCTION public.provider_connections_key_claims();

CREATE TRIGGER subscriptions_record_change AFTER INSERT OR UPDATE OF status ON public.subscriptions FOR EACH ROW EXECUTE FUNCTION public.record_subscription_change();

CREATE TRIGGER subscriptions_record_product AFTER INSERT ON public.subscriptions FOR EACH ROW EXECUTE FUNCTION public.record_subscription_product();

CREATE TRIGGER subscriptions_record_product_update AFTER UPDATE OF product_id ON public.subscriptions FOR EACH ROW WHEN ((old.product_id IS DISTINCT FROM new.product_id)) EXECUTE FUNCTION public.record_subscription_product();

ALTER TABLE ONLY public.api_keys
    ADD CONSTRAINT api_keys_tenant_id_foreign FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.app_providers
    ADD CONSTRAINT app_providers_app_id_foreign FOREIGN KEY (app_id) REFERENCES public.apps(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.app_providers
    ADD CONSTRAINT app_providers_connection_id_foreign FOREIGN KEY (connection_id) REFERENCES public.provider_connections(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.app_providers
    ADD CONSTRAINT app_providers_tenant_id_foreign FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.apps
    ADD CONSTRAINT apps_tenant_id_foreign FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.audit_entries
    ADD CONSTRAINT audit_entries_tenant_id_foreign FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.chart_customer_facts
    ADD CONSTRAINT chart_customer_facts_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.chart_day_sums
    ADD CONSTRAINT chart_day_sums_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.chart_fold_state
    ADD CONSTRAINT chart_fold_state_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.chart_ltv_sums
    ADD CONSTRAINT chart_ltv_sums_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.chart_pending
    ADD CONSTRAINT chart_pending_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.chart_retention_sums
    ADD CONSTRAINT chart_retention_sums_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.chart_subscription_facts
    ADD CONSTRAINT chart_subscription_facts_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.client_rate_limit_buckets
    ADD CONSTRAINT client_rate_limit_buckets_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.coupon_counterparts
    ADD CONSTRAINT coupon_counterparts_coupon_id_foreign FOREIGN KEY (coupon_id) REFERENCES public.coupons(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.coupon_counterparts
    ADD CONSTRAINT coupon_counterparts_tenant_id_foreign FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.coupons
    ADD CONSTRAINT coupons_tenant_id_foreign FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.customer_event_sequences
    ADD CONSTRAINT customer_event_sequences_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.dashboard_sessions
    ADD CONSTRAINT dashboard_sessions_tenant_id_foreign FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.dashboard_sessions
    ADD CONSTRAINT dashboard_sessions_user_id_foreign FOREIGN KEY (user_id) REFERENCES public.dashboard_users(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.dashboard_users
    ADD CONSTRAINT dashboard_users_tenant_id_foreign FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.entitlement_grants
    ADD CONSTRAINT entitlement_grants_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.entitlement_grants
    ADD CONSTRAINT entitlement_grants_tenant_id_product_id_fkey FOREIGN KEY (tenant_id, product_id) REFERENCES public.products(tenant_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.entitlements
    ADD CONSTRAINT entitlements_subscription_id_foreign FOREIGN KEY (subscription_id) REFERENCES public.subscriptions(id) ON DELETE SET NULL;

ALTER TABLE ONLY public.entitlements
    ADD CONSTRAINT entitlements_tenant_id_foreign FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.entitlements
    ADD CONSTRAINT entitlements_tenant_product_id_fkey FOREIGN KEY (tenant_id, product_id) REFERENCES public.products(tenant_id, id) ON DELETE SET NULL (product_id);

ALTER TABLE ONLY public.exchange_rates
    ADD CONSTRAINT exchange_rates_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.held_changes
    ADD CONSTRAINT held_changes_requested_by_key_foreign FOREIGN KEY (requested_by_key) REFERENCES public.api_keys(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.held_changes
    ADD CONSTRAINT held_changes_tenant_id_foreign FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.import_items
    ADD CONSTRAINT import_items_import_fkey FOREIGN KEY (tenant_id, import_id) REFERENCES public.imports(tenant_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.import_items
    ADD CONSTRAINT import_items_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.imports
    ADD CONSTRAINT imports_connection_id_fkey FOREIGN KEY (connection_id) REFERENCES public.provider_connections(id) ON DELETE SET NULL;

ALTER TABLE ONLY public.imports
    ADD CONSTRAINT imports_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.outbound_attempts
    ADD CONSTRAINT outbound_attempts_delivery_id_fkey FOREIGN KEY (delivery_id) REFERENCES public.outbound_deliveries(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.outbound_attempts
    ADD CONSTRAINT outbound_attempts_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.outbound_deliveries
    ADD CONSTRAINT outbound_deliveries_event_id_fkey FOREIGN KEY (event_id) REFERENCES public.outbound_events(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.outbound_deliveries
    ADD CONSTRAINT outbound_deliveries_tenant_endpoint_id_fkey FOREIGN KEY (tenant_id, endpoint_id) REFERENCES public.webhook_endpoints(tenant_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.outbound_deliveries
    ADD CONSTRAINT outbound_deliveries_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.outbound_drains
    ADD CONSTRAINT outbound_drains_tenant_endpoint_id_fkey FOREIGN KEY (tenant_id, endpoint_id) REFERENCES public.webhook_endpoints(tenant_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.outbound_drains
    ADD CONSTRAINT outbound_drains_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.outbound_events
    ADD CONSTRAINT outbound_events_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.outbound_outbox
    ADD CONSTRAINT outbound_outbox_delivery_id_fkey FOREIGN KEY (delivery_id) REFERENCES public.outbound_deliveries(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.overview_change_days
    ADD CONSTRAINT overview_change_days_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.overview_entitlement_counts
    ADD CONSTRAINT overview_entitlement_counts_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.overview_subscription_counts
    ADD CONSTRAINT overview_subscription_counts_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.payment_links
    ADD CONSTRAINT payment_links_app_id_foreign FOREIGN KEY (app_id) REFERENCES public.apps(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.payment_links
    ADD CONSTRAINT payment_links_connection_id_foreign FOREIGN KEY (connection_id) REFERENCES public.provider_connections(id) ON DELETE SET NULL;

ALTER TABLE ONLY public.payment_links
    ADD CONSTRAINT payment_links_product_id_foreign FOREIGN KEY (product_id) REFERENCES public.products(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.payment_links
    ADD CONSTRAINT payment_links_tenant_id_foreign FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.paywalls
    ADD CONSTRAINT paywalls_tenant_id_foreign FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.prices
    ADD CONSTRAINT prices_product_id_foreign FOREIGN KEY (product_id) REFERENCES public.products(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.prices
    ADD CONSTRAINT prices_tenant_id_foreign FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.product_provider_refs
    ADD CONSTRAINT product_provider_refs_product_id_foreign FOREIGN KEY (product_id) REFERENCES public.products(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.product_provider_refs
    ADD CONSTRAINT product_provider_refs_tenant_id_foreign FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.products
    ADD CONSTRAINT products_app_id_foreign FOREIGN KEY (app_id) REFERENCES public.apps(id) ON DELETE SET NULL;

ALTER TABLE ONLY public.products
    ADD CONSTRAINT products_tenant_id_foreign FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.provider_connections
    ADD CONSTRAINT provider_connections_tenant_id_foreign FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.provider_plans
    ADD CONSTRAINT provider_plans_app_id_foreign FOREIGN KEY (app_id) REFERENCES public.apps(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.provider_plans
    ADD CONSTRAINT provider_plans_connection_id_foreign FOREIGN KEY (connection_id) REFERENCES public.provider_connections(id) ON DELETE SET NULL;

ALTER TABLE ONLY public.provider_plans
    ADD CONSTRAINT provider_plans_product_id_foreign FOREIGN KEY (product_id) REFERENCES public.products(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.provider_plans
    ADD CONSTRAINT provider_plans_tenant_id_foreign FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.provisional_access
    ADD CONSTRAINT provisional_access_delivery_id_fkey FOREIGN KEY (delivery_id) REFERENCES public.webhook_deliveries(id) ON DELETE SET NULL;

ALTER TABLE ONLY public.provisional_access
    ADD CONSTRAINT provisional_access_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.provisional_access
    ADD CONSTRAINT provisional_access_tenant_id_product_id_fkey FOREIGN KEY (tenant_id, product_id) REFERENCES public.products(tenant_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.rate_limit_buckets
    ADD CONSTRAINT rate_limit_buckets_tenant_id_foreign FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.reconciliation_settings
    ADD CONSTRAINT reconciliation_settings_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.reconciliations
    ADD CONSTRAINT reconciliations_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.store_purchase_misses
    ADD CONSTRAINT store_purchase_misses_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.store_purchase_tokens
    ADD CONSTRAINT store_purchase_tokens_entitlement_id_foreign FOREIGN KEY (entitlement_id) REFERENCES public.entitlements(id) ON DELETE SET NULL;

ALTER TABLE ONLY public.store_purchase_tokens
    ADD CONSTRAINT store_purchase_tokens_product_id_foreign FOREIGN KEY (product_id) REFERENCES public.products(id) ON DELETE SET NULL;

ALTER TABLE ONLY public.store_purchase_tokens
    ADD CONSTRAINT store_purchase_tokens_subscription_id_foreign FOREIGN KEY (subscription_id) REFERENCES public.subscriptions(id) ON DELETE SET NULL;

ALTER TABLE ONLY public.store_purchase_tokens
    ADD CONSTRAINT store_purchase_tokens_tenant_id_foreign FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.subscription_changes
    ADD CONSTRAINT subscription_changes_subscription_id_foreign FOREIGN KEY (subscription_id) REFERENCES public.subscriptions(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.subscription_changes
    ADD CONSTRAINT subscription_changes_tenant_id_foreign FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.subscription_product_changes
    ADD CONSTRAINT subscription_product_changes_subscription_id_fkey FOREIGN KEY (subscription_id) REFERENCES public.subscriptions(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.subscription_product_changes
    ADD CONSTRAINT subscription_product_changes_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.subscriptions
    ADD CONSTRAINT subscriptions_tenant_id_foreign FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.subscriptions
    ADD CONSTRAINT subscriptions_tenant_product_id_fkey FOREIGN KEY (tenant_id, product_id) REFERENCES public.products(tenant_id, id) ON DELETE SET NULL (product_id);

ALTER TABLE ONLY public.sync_events
    ADD CONSTRAINT sync_events_run_id_foreign FOREIGN KEY (run_id) REFERENCES public.sync_runs(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.sync_events
    ADD CONSTRAINT sync_events_tenant_id_foreign FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.sync_runs
    ADD CONSTRAINT sync_runs_tenant_id_foreign FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.team_invitations
    ADD CONSTRAINT team_invitations_accepted_by_foreign FOREIGN KEY (accepted_by) REFERENCES public.dashboard_users(id) ON DELETE SET NULL;

ALTER TABLE ONLY public.team_invitations
    ADD CONSTRAINT team_invitations_invited_by_foreign FOREIGN KEY (invited_by) REFERENCES public.dashboard_users(id) ON DELETE SET NULL;

ALTER TABLE ONLY public.team_invitations
    ADD CONSTRAINT team_invitations_tenant_id_foreign FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_subscription_id_fkey FOREIGN KEY (subscription_id) REFERENCES public.subscriptions(id) ON DELETE SET NULL;

ALTER TABLE ONLY public.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_tenant_id_foreign FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.webhook_endpoints
    ADD CONSTRAINT webhook_endpoints_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.webhook_outbox
    ADD CONSTRAINT webhook_outbox_delivery_id_foreign FOREIGN KEY (delivery_id) REFERENCES public.webhook_deliveries(id) ON DELETE CASCADE;

ALTER TABLE public.api_keys ENABLE ROW LEVEL SECURITY;

CREATE POLICY api_keys_login_by_hash ON public.api_keys FOR SELECT TO billing_api USING (true);

CREATE POLICY api_keys_login_last_used ON public.api_keys FOR UPDATE TO billing_api USING (true) WITH CHECK (true);

CREATE POLICY api_keys_login_signup ON public.api_keys FOR INSERT TO billing_api WITH CHECK ((tenant_id IN ( SELECT t.id
   FROM public.tenants t
  WHERE (t.created_at = now()))));

CREATE POLICY api_keys_login_signup_drop ON public.api_keys FOR DELETE TO billing_api USING ((tenant_id IN ( SELECT t.id
   FROM public.tenants t
  WHERE (t.created_at = now()))));

CREATE POLICY api_keys_system ON public.api_keys TO :owner USING (true) WITH CHECK (true);

CREATE POLICY api_keys_tenant ON public.api_keys TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

ALTER TABLE public.app_providers ENABLE ROW LEVEL SECURITY;

CREATE POLICY app_providers_system ON public.app_providers TO :owner USING (true) WITH CHECK (true);

CREATE POLICY app_providers_tenant ON public.app_providers TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

ALTER TABLE public.apps ENABLE ROW LEVEL SECURITY;

CREATE POLICY apps_login_by_key ON public.apps FOR SELECT TO billing_api USING (true);

CREATE POLICY apps_login_signup ON public.apps FOR INSERT TO billing_api WITH CHECK ((tenant_id IN ( SELECT t.id
   FROM public.tenants t
  WHERE (t.created_at = now()))));

CREATE POLICY apps_system ON public.apps TO :owner USING (true) WITH CHECK (true);

CREATE POLICY apps_tenant ON public.apps TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

ALTER TABLE public.audit_entries ENABLE ROW LEVEL SECURITY;

CREATE POLICY audit_entries_system ON public.audit_entries TO :owner USING (true) WITH CHECK (true);

CREATE POLICY audit_entries_tenant ON public.audit_entries TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

ALTER TABLE public.chart_customer_facts ENABLE ROW LEVEL SECURITY;

CREATE POLICY chart_customer_facts_system ON public.chart_customer_facts TO :owner USING (true) WITH CHECK (true);

CREATE POLICY chart_customer_facts_tenant ON public.chart_customer_facts TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

ALTER TABLE public.chart_day_sums ENABLE ROW LEVEL SECURITY;

CREATE POLICY chart_day_sums_system ON public.chart_day_sums TO :owner USING (true) WITH CHECK (true);

CREATE POLICY chart_day_sums_tenant ON public.chart_day_sums TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

ALTER TABLE public.chart_fold_state ENABLE ROW LEVEL SECURITY;

CREATE POLICY chart_fold_state_system ON public.chart_fold_state TO :owner USING (true) WITH CHECK (true);

CREATE POLICY chart_fold_state_tenant ON public.chart_fold_state TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

ALTER TABLE public.chart_ltv_sums ENABLE ROW LEVEL SECURITY;

CREATE POLICY chart_ltv_sums_system ON public.chart_ltv_sums TO :owner USING (true) WITH CHECK (true);

CREATE POLICY chart_ltv_sums_tenant ON public.chart_ltv_sums TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

ALTER TABLE public.chart_pending ENABLE ROW LEVEL SECURITY;

CREATE POLICY chart_pending_system ON public.chart_pending TO :owner USING (true) WITH CHECK (true);

CREATE POLICY chart_pending_tenant ON public.chart_pending TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

ALTER TABLE public.chart_retention_sums ENABLE ROW LEVEL SECURITY;

CREATE POLICY chart_retention_sums_system ON public.chart_retention_sums TO :owner USING (true) WITH CHECK (true);

CREATE POLICY chart_retention_sums_tenant ON public.chart_retention_sums TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

ALTER TABLE public.chart_subscription_facts ENABLE ROW LEVEL SECURITY;

CREATE POLICY chart_subscription_facts_system ON public.chart_subscription_facts TO :owner USING (true) WITH CHECK (true);

CREATE POLICY chart_subscription_facts_tenant ON public.chart_subscription_facts TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

ALTER TABLE public.client_rate_limit_buckets ENABLE ROW LEVEL SECURITY;

CREATE POLICY client_rate_limit_buckets_login_take ON public.client_rate_limit_buckets TO billing_api USING (true) WITH CHECK (true);

CREATE POLICY client_rate_limit_buckets_system ON public.client_rate_limit_buckets TO :owner USING (true) WITH CHECK (true);

CREATE POLICY client_rate_limit_buckets_tenant ON public.client_rate_limit_buckets TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

ALTER TABLE public.coupon_counterparts ENABLE ROW LEVEL SECURITY;

CREATE POLICY coupon_counterparts_system ON public.coupon_counterparts TO :owner USING (true) WITH CHECK (true);

CREATE POLICY coupon_counterparts_tenant ON public.coupon_counterparts TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

ALTER TABLE public.coupons ENABLE ROW LEVEL SECURITY;

CREATE POLICY coupons_system ON public.coupons TO :owner USING (true) WITH CHECK (true);

CREATE POLICY coupons_tenant ON public.coupons TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

ALTER TABLE public.customer_event_sequences ENABLE ROW LEVEL SECURITY;

CREATE POLICY customer_event_sequences_system ON public.customer_event_sequences TO :owner USING (true) WITH CHECK (true);

CREATE POLICY customer_event_sequences_tenant ON public.customer_event_sequences TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

ALTER TABLE public.dashboard_sessions ENABLE ROW LEVEL SECURITY;

CREATE POLICY dashboard_sessions_login_login ON public.dashboard_sessions FOR INSERT TO billing_api WITH CHECK ((EXISTS ( SELECT 1
   FROM public.dashboard_users u
  WHERE ((u.id = dashboard_sessions.user_id) AND (u.tenant_id = dashboard_sessions.tenant_id)))));

CREATE POLICY dashboard_sessions_login_logout ON public.dashboard_sessions FOR DELETE TO billing_api USING (true);

CREATE POLICY dashboard_sessions_login_park_secret ON public.dashboard_sessions FOR UPDATE TO billing_api USING (true) WITH CHECK (true);

CREATE POLICY dashboard_sessions_login_session ON public.dashboard_sessions FOR SELECT TO billing_api USING (true);

CREATE POLICY dashboard_sessions_system ON public.dashboard_sessions TO :owner USING (true) WITH CHECK (true);

CREATE POLICY dashboard_sessions_tenant ON public.dashboard_sessions TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

ALTER TABLE public.dashboard_users ENABLE ROW LEVEL SECURITY;

CREATE POLICY dashboard_users_login_login ON public.dashboard_users FOR SELECT TO billing_api USING (true);

CREATE POLICY dashboard_users_login_signup ON public.dashboard_users FOR INSERT TO billing_api WITH CHECK ((tenant_id IN ( SELECT t.id
   FROM public.tenants t
  WHERE (t.created_at = now()))));

CREATE POLICY dashboard_users_system ON public.dashboard_users TO :owner USING (true) WITH CHECK (true);

CREATE POLICY dashboard_users_tenant ON public.dashboard_users TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

ALTER TABLE public.entitlement_grants ENABLE ROW LEVEL SECURITY;

CREATE POLICY entitlement_grants_system ON public.entitlement_grants TO :owner USING (true) WITH CHECK (true);

CREATE POLICY entitlement_grants_tenant ON public.entitlement_grants TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

ALTER TABLE public.entitlements ENABLE ROW LEVEL SECURITY;

CREATE POLICY entitlements_system ON public.entitlements TO :owner USING (true) WITH CHECK (true);

CREATE POLICY entitlements_tenant ON public.entitlements TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

ALTER TABLE public.exchange_rates ENABLE ROW LEVEL SECURITY;

CREATE POLICY exchange_rates_system ON public.exchange_rates TO :owner USING (true) WITH CHECK (true);

CREATE POLICY exchange_rates_tenant ON public.exchange_rates TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

ALTER TABLE public.held_changes ENABLE ROW LEVEL SECURITY;

CREATE POLICY held_changes_system ON public.held_changes TO :owner USING (true) WITH CHECK (true);

CREATE POLICY held_changes_tenant ON public.held_changes TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

ALTER TABLE public.import_items ENABLE ROW LEVEL SECURITY;

CREATE POLICY import_items_system ON public.import_items TO :owner USING (true) WITH CHECK (true);

CREATE POLICY import_items_tenant ON public.import_items TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

ALTER TABLE public.imports ENABLE ROW LEVEL SECURITY;

CREATE POLICY imports_system ON public.imports TO :owner USING (true) WITH CHECK (true);

CREATE POLICY imports_tenant ON public.imports TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

ALTER TABLE public.outbound_attempts ENABLE ROW LEVEL SECURITY;

CREATE POLICY outbound_attempts_system ON public.outbound_attempts TO :owner USING (true) WITH CHECK (true);

CREATE POLICY outbound_attempts_tenant ON public.outbound_attempts TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

ALTER TABLE public.outbound_deliveries ENABLE ROW LEVEL SECURITY;

CREATE POLICY outbound_deliveries_system ON public.outbound_deliveries TO :owner USING (true) WITH CHECK (true);

CREATE POLICY outbound_deliveries_tenant ON public.outbound_deliveries TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

ALTER TABLE public.outbound_drains ENABLE ROW LEVEL SECURITY;

CREATE POLICY outbound_drains_dispatcher ON public.outbound_drains FOR SELECT TO billing_api USING (true);

CREATE POLICY outbound_drains_system ON public.outbound_drains TO :owner USING (true) WITH CHECK (true);

CREATE POLICY outbound_drains_tenant ON public.outbound_drains TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

ALTER TABLE public.outbound_events ENABLE ROW LEVEL SECURITY;

CREATE POLICY outbound_events_system ON public.outbound_events TO :owner USING (true) WITH CHECK (true);

CREATE POLICY outbound_events_tenant ON public.outbound_events TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

ALTER TABLE public.overview_change_days ENABLE ROW LEVEL SECURITY;

CREATE POLICY overview_change_days_system ON public.overview_change_days TO :owner USING (true) WITH CHECK (true);

CREATE POLICY overview_change_days_tenant ON public.overview_change_days TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

ALTER TABLE public.overview_entitlement_counts ENABLE ROW LEVEL SECURITY;

CREATE POLICY overview_entitlement_counts_system ON public.overview_entitlement_counts TO :owner USING (true) WITH CHECK (true);

CREATE POLICY overview_entitlement_counts_tenant ON public.overview_entitlement_counts TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

ALTER TABLE public.overview_subscription_counts ENABLE ROW LEVEL SECURITY;

CREATE POLICY overview_subscription_counts_system ON public.overview_subscription_counts TO :owner USING (true) WITH CHECK (true);

CREATE POLICY overview_subscription_counts_tenant ON public.overview_subscription_counts TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

ALTER TABLE public.payment_links ENABLE ROW LEVEL SECURITY;

CREATE POLICY payment_links_system ON public.payment_links TO :owner USING (true) WITH CHECK (true);

CREATE POLICY payment_links_tenant ON public.payment_links TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

ALTER TABLE public.paywalls ENABLE ROW LEVEL SECURITY;

CREATE POLICY paywalls_system ON public.paywalls TO :owner USING (true) WITH CHECK (true);

CREATE POLICY paywalls_tenant ON public.paywalls TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

ALTER TABLE public.prices ENABLE ROW LEVEL SECURITY;

CREATE POLICY prices_system ON public.prices TO :owner USING (true) WITH CHECK (true);

CREATE POLICY prices_tenant ON public.prices TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

ALTER TABLE public.product_provider_refs ENABLE ROW LEVEL SECURITY;

CREATE POLICY product_provider_refs_system ON public.product_provider_refs TO :owner USING (true) WITH CHECK (true);

CREATE POLICY product_provider_refs_tenant ON public.product_provider_refs TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

ALTER TABLE public.products ENABLE ROW LEVEL SECURITY;

CREATE POLICY products_system ON public.products TO :owner USING (true) WITH CHECK (true);

CREATE POLICY products_tenant ON public.products TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

ALTER TABLE public.provider_connections ENABLE ROW LEVEL SECURITY;

CREATE POLICY provider_connections_login_route ON public.provider_connections FOR SELECT TO billing_api USING (true);

CREATE POLICY provider_connections_system ON public.provider_connections TO :owner USING (true) WITH CHECK (true);

CREATE POLICY provider_connections_tenant ON public.provider_connections TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

ALTER TABLE public.provider_plans ENABLE ROW LEVEL SECURITY;

CREATE POLICY provider_plans_system ON public.provider_plans TO :owner USING (true) WITH CHECK (true);

CREATE POLICY provider_plans_tenant ON public.provider_plans TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

ALTER TABLE public.provisional_access ENABLE ROW LEVEL SECURITY;

CREATE POLICY provisional_access_system ON public.provisional_access TO :owner USING (true) WITH CHECK (true);

CREATE POLICY provisional_access_tenant ON public.provisional_access TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

ALTER TABLE public.rate_limit_buckets ENABLE ROW LEVEL SECURITY;

CREATE POLICY rate_limit_buckets_login_take ON public.rate_limit_buckets TO billing_api USING (true) WITH CHECK (true);

CREATE POLICY rate_limit_buckets_system ON public.rate_limit_buckets TO :owner USING (true) WITH CHECK (true);

CREATE POLICY rate_limit_buckets_tenant ON public.rate_limit_buckets TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

ALTER TABLE public.reconciliation_settings ENABLE ROW LEVEL SECURITY;

CREATE POLICY reconciliation_settings_system ON public.reconciliation_settings TO :owner USING (true) WITH CHECK (true);

CREATE POLICY reconciliation_settings_tenant ON public.reconciliation_settings TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

ALTER TABLE public.reconciliations ENABLE ROW LEVEL SECURITY;

CREATE POLICY reconciliations_system ON public.reconciliations TO :owner USING (true) WITH CHECK (true);

CREATE POLICY reconciliations_tenant ON public.reconciliations TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

ALTER TABLE public.store_purchase_misses ENABLE ROW LEVEL SECURITY;

CREATE POLICY store_purchase_misses_login_remember ON public.store_purchase_misses TO billing_api USING (true) WITH CHECK (true);

CREATE POLICY store_purchase_misses_system ON public.store_purchase_misses TO :owner USING (true) WITH CHECK (true);

CREATE POLICY store_purchase_misses_tenant ON public.store_purchase_misses TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

ALTER TABLE public.store_purchase_tokens ENABLE ROW LEVEL SECURITY;

CREATE POLICY store_purchase_tokens_system ON public.store_purchase_tokens TO :owner USING (true) WITH CHECK (true);

CREATE POLICY store_purchase_tokens_tenant ON public.store_purchase_tokens TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

ALTER TABLE public.subscription_changes ENABLE ROW LEVEL SECURITY;

CREATE POLICY subscription_changes_system ON public.subscription_changes TO :owner USING (true) WITH CHECK (true);

CREATE POLICY subscription_changes_tenant ON public.subscription_changes TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

ALTER TABLE public.subscription_product_changes ENABLE ROW LEVEL SECURITY;

CREATE POLICY subscription_product_changes_system ON public.subscription_product_changes TO :owner USING (true) WITH CHECK (true);

CREATE POLICY subscription_product_changes_tenant ON public.subscription_product_changes TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

ALTER TABLE public.subscriptions ENABLE ROW LEVEL SECURITY;

CREATE POLICY subscriptions_system ON public.subscriptions TO :owner USING (true) WITH CHECK (true);

CREATE POLICY subscriptions_tenant ON public.subscriptions TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

ALTER TABLE public.sync_events ENABLE ROW LEVEL SECURITY;

CREATE POLICY sync_events_system ON public.sync_events TO :owner USING (true) WITH CHECK (true);

CREATE POLICY sync_events_tenant ON public.sync_events TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

ALTER TABLE public.sync_runs ENABLE ROW LEVEL SECURITY;

CREATE POLICY sync_runs_system ON public.sync_runs TO :owner USING (true) WITH CHECK (true);

CREATE POLICY sync_runs_tenant ON public.sync_runs TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

ALTER TABLE public.team_invitations ENABLE ROW LEVEL SECURITY;

CREATE POLICY team_invitations_system ON public.team_invitations TO :owner USING (true) WITH CHECK (true);

CREATE POLICY team_invitations_tenant ON public.team_invitations TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

ALTER TABLE public.tenants ENABLE ROW LEVEL SECURITY;

CREATE POLICY tenants_login_born_here ON public.tenants FOR SELECT TO billing_api USING ((created_at = now()));

CREATE POLICY tenants_login_signup ON public.tenants FOR INSERT TO billing_api WITH CHECK ((NOT is_demo));

CREATE POLICY tenants_self ON public.tenants TO billing_app USING ((id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

CREATE POLICY tenants_system ON public.tenants TO :owner USING (true) WITH CHECK (true);

ALTER TABLE public.webhook_deliveries ENABLE ROW LEVEL SECURITY;

CREATE POLICY webhook_deliveries_login_receive ON public.webhook_deliveries FOR INSERT TO billing_api WITH CHECK (true);

CREATE POLICY webhook_deliveries_login_receive_read ON public.webhook_deliveries FOR SELECT TO billing_api USING (true);

CREATE POLICY webhook_deliveries_login_receive_update ON public.webhook_deliveries FOR UPDATE TO billing_api USING (true) WITH CHECK (true);

CREATE POLICY webhook_deliveries_system ON public.webhook_deliveries TO :owner USING (true) WITH CHECK (true);

CREATE POLICY webhook_deliveries_tenant ON public.webhook_deliveries TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

ALTER TABLE public.webhook_endpoints ENABLE ROW LEVEL SECURITY;

CREATE POLICY webhook_endpoints_system ON public.webhook_endpoints TO :owner USING (true) WITH CHECK (true);

CREATE POLICY webhook_endpoints_tenant ON public.webhook_endpoints TO billing_app USING ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid)) WITH CHECK ((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid));

REVOKE ALL ON FUNCTION public.chart_folds_due() FROM PUBLIC;
GRANT ALL ON FUNCTION public.chart_folds_due() TO billing_api;

REVOKE ALL ON FUNCTION public.expire_provisional_access(p_max integer) FROM PUBLIC;
GRANT ALL ON FUNCTION public.expire_provisional_access(p_max integer) TO billing_api;

REVOKE ALL ON FUNCTION public.mark_receipt_premium(p_tenant uuid, p_delivery uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION public.mark_receipt_premium(p_tenant uuid, p_delivery uuid) TO billing_api;

REVOKE ALL ON FUNCTION public.outbound_wanted(p_tenant uuid, p_type text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.outbound_wanted(p_tenant uuid, p_type text) TO billing_app;

REVOKE ALL ON FUNCTION public.overview_rollups_due(threshold integer) FROM PUBLIC;
GRANT ALL ON FUNCTION public.overview_rollups_due(threshold integer) TO billing_api;

REVOKE ALL ON FUNCTION public.record_outbound_event(p_tenant uuid, p_type text, p_subject text, p_data jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION public.record_outbound_event(p_tenant uuid, p_type text, p_subject text, p_data jsonb) TO billing_app;

REVOKE ALL ON FUNCTION public.record_provisional_access(p_tenant uuid, p_provider text, p_delivery uuid, p_stop boolean, p_customer_key text, p_subscription text, p_app_user text, p_sku text, p_event_at timestamp with time zone, p_sandbox boolean, p_seconds integer, p_notify text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.record_provisional_access(p_tenant uuid, p_provider text, p_delivery uuid, p_stop boolean, p_customer_key text, p_subscription text, p_app_user text, p_sku text, p_event_at timestamp with time zone, p_sandbox boolean, p_seconds integer, p_notify text) TO billing_api;

REVOKE ALL ON FUNCTION public.release_pasted_key_claims(p_connection uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION public.release_pasted_key_claims(p_connection uuid) TO billing_app;

REVOKE ALL ON FUNCTION public.team_invitation_tenant(p_hash text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.team_invitation_tenant(p_hash text) TO billing_api;
GRANT ALL ON FUNCTION public.team_invitation_tenant(p_hash text) TO billing_app;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.api_keys TO billing_app;
GRANT DELETE ON TABLE public.api_keys TO billing_api;

GRANT SELECT(id) ON TABLE public.api_keys TO billing_api;

GRANT SELECT(tenant_id),INSERT(tenant_id) ON TABLE public.api_keys TO billing_api;

GRANT SELECT(name),INSERT(name) ON TABLE public.api_keys TO billing_api;

GRANT SELECT(key_hash),INSERT(key_hash) ON TABLE public.api_keys TO billing_api;

GRANT INSERT(key_hint) ON TABLE public.api_keys TO billing_api;

GRANT SELECT(scopes),INSERT(scopes) ON TABLE public.api_keys TO billing_api;

GRANT SELECT(expires_at),INSERT(expires_at) ON TABLE public.api_keys TO billing_api;

GRANT SELECT(revoked_at) ON TABLE public.api_keys TO billing_api;

GRANT SELECT(last_used_at),UPDATE(last_used_at) ON TABLE public.api_keys TO billing_api;

GRANT SELECT(require_approval) ON TABLE public.api_keys TO billing_api;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.app_providers TO billing_app;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.apps TO billing_app;

GRANT SELECT(id) ON TABLE public.apps TO billing_api;

GRANT SELECT(tenant_id),INSERT(tenant_id) ON TABLE public.apps TO billing_api;

GRANT INSERT(name) ON TABLE public.apps TO billing_api;

GRANT SELECT(publishable_key_test),INSERT(publishable_key_test) ON TABLE public.apps TO billing_api;

GRANT SELECT(publishable_key_live),INSERT(publishable_key_live) ON TABLE public.apps TO billing_api;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.audit_entries TO billing_app;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.chart_customer_facts TO billing_app;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.chart_day_sums TO billing_app;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.chart_fold_state TO billing_app;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.chart_ltv_sums TO billing_app;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.chart_pending TO billing_app;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.chart_retention_sums TO billing_app;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.chart_subscription_facts TO billing_app;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.client_rate_limit_buckets TO billing_app;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.client_rate_limit_buckets TO billing_api;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.coupon_counterparts TO billing_app;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.coupons TO billing_app;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.customer_event_sequences TO billing_app;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.dashboard_login_attempts TO billing_api;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.dashboard_sessions TO billing_app;
GRANT DELETE ON TABLE public.dashboard_sessions TO billing_api;

GRANT SELECT(id) ON TABLE public.dashboard_sessions TO billing_api;

GRANT SELECT(tenant_id),INSERT(tenant_id) ON TABLE public.dashboard_sessions TO billing_api;

GRANT SELECT(user_id),INSERT(user_id) ON TABLE public.dashboard_sessions TO billing_api;

GRANT SELECT(token_hash),INSERT(token_hash) ON TABLE public.dashboard_sessions TO billing_api;

GRANT SELECT(expires_at),INSERT(expires_at) ON TABLE public.dashboard_sessions TO billing_api;

GRANT SELECT(pending_secret),UPDATE(pending_secret) ON TABLE public.dashboard_sessions TO billing_api;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.dashboard_users TO billing_app;

GRANT SELECT(id) ON TABLE public.dashboard_users TO billing_api;

GRANT SELECT(tenant_id),INSERT(tenant_id) ON TABLE public.dashboard_users TO billing_api;

GRANT SELECT(email),INSERT(email) ON TABLE public.dashboard_users TO billing_api;

GRANT SELECT(password_hash),INSERT(password_hash) ON TABLE public.dashboard_users TO billing_api;

GRANT SELECT(role) ON TABLE public.dashboard_users TO billing_api;

GRANT SELECT(removed_at) ON TABLE public.dashboard_users TO billing_api;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.entitlement_grants TO billing_app;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.entitlements TO billing_app;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.exchange_rates TO billing_app;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.held_changes TO billing_app;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.import_items TO billing_app;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.imports TO billing_app;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.outbound_attempts TO billing_app;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.outbound_deliveries TO billing_app;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.outbound_drains TO billing_app;
GRANT SELECT ON TABLE public.outbound_drains TO billing_api;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.outbound_events TO billing_app;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.outbound_outbox TO billing_api;
GRANT INSERT ON TABLE public.outbound_outbox TO billing_app;

GRANT SELECT(delivery_id) ON TABLE public.outbound_outbox TO billing_app;

GRANT USAGE ON SEQUENCE public.outbound_outbox_id_seq TO billing_api;
GRANT USAGE ON SEQUENCE public.outbound_outbox_id_seq TO billing_app;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.overview_change_days TO billing_app;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.overview_entitlement_counts TO billing_app;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.overview_subscription_counts TO billing_app;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.payment_links TO billing_app;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.paywalls TO billing_app;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.prices TO billing_app;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.product_provider_refs TO billing_app;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.products TO billing_app;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.provider_connections TO billing_app;

GRANT SELECT(id) ON TABLE public.provider_connections TO billing_api;

GRANT SELECT(tenant_id) ON TABLE public.provider_connections TO billing_api;

GRANT SELECT(provider) ON TABLE public.provider_connections TO billing_api;

GRANT SELECT(account_ref) ON TABLE public.provider_connections TO billing_api;

GRANT SELECT(is_active) ON TABLE public.provider_connections TO billing_api;

GRANT SELECT(verified_at) ON TABLE public.provider_connections TO billing_api;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.provider_plans TO billing_app;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.provisional_access TO billing_app;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.rate_limit_buckets TO billing_app;
GRANT SELECT,INSERT,UPDATE ON TABLE public.rate_limit_buckets TO billing_api;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.reconciliation_settings TO billing_app;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.reconciliations TO billing_app;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.store_purchase_misses TO billing_app;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.store_purchase_misses TO billing_api;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.store_purchase_tokens TO billing_app;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.subscription_changes TO billing_app;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.subscription_product_changes TO billing_app;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.subscriptions TO billing_app;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.sync_events TO billing_app;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.sync_runs TO billing_app;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.team_invitations TO billing_app;

GRANT SELECT ON TABLE public.tenants TO billing_app;
GRANT SELECT ON TABLE public.tenants TO billing_api;

GRANT UPDATE(name) ON TABLE public.tenants TO billing_app;
GRANT INSERT(name) ON TABLE public.tenants TO billing_api;

GRANT UPDATE(plan) ON TABLE public.tenants TO billing_app;

GRANT UPDATE(subscriber_limit) ON TABLE public.tenants TO billing_app;

GRANT INSERT(is_demo) ON TABLE public.tenants TO billing_api;

GRANT UPDATE(updated_at) ON TABLE public.tenants TO billing_app;

GRANT UPDATE(outbound_readiness) ON TABLE public.tenants TO billing_app;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.webhook_deliveries TO billing_app;

GRANT SELECT(id) ON TABLE public.webhook_deliveries TO billing_api;

GRANT SELECT(tenant_id),INSERT(tenant_id) ON TABLE public.webhook_deliveries TO billing_api;

GRANT SELECT(provider),INSERT(provider) ON TABLE public.webhook_deliveries TO billing_api;

GRANT SELECT(event_id),INSERT(event_id) ON TABLE public.webhook_deliveries TO billing_api;

GRANT SELECT(event_type),INSERT(event_type) ON TABLE public.webhook_deliveries TO billing_api;

GRANT INSERT(mode) ON TABLE public.webhook_deliveries TO billing_api;

GRANT SELECT(status),INSERT(status),UPDATE(status) ON TABLE public.webhook_deliveries TO billing_api;

GRANT INSERT(reason),UPDATE(reason) ON TABLE public.webhook_deliveries TO billing_api;

GRANT INSERT(payload) ON TABLE public.webhook_deliveries TO billing_api;

GRANT SELECT(delivery_count),UPDATE(delivery_count) ON TABLE public.webhook_deliveries TO billing_api;

GRANT INSERT(processed_at) ON TABLE public.webhook_deliveries TO billing_api;

GRANT SELECT(created_at) ON TABLE public.webhook_deliveries TO billing_api;

GRANT UPDATE(updated_at) ON TABLE public.webhook_deliveries TO billing_api;

GRANT INSERT(buyer_email) ON TABLE public.webhook_deliveries TO billing_api;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.webhook_endpoints TO billing_app;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.webhook_outbox TO billing_api;

GRANT USAGE ON SEQUENCE public.webhook_outbox_id_seq TO billing_api;
`;
