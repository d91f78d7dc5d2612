import type { Knex } from 'knex';
import { tenantTablePolicies } from './tenant-policies';
import { APP_ROLE } from '../tenant-tx';
import { LOGIN_ROLE } from '../login-role';

/**
 * Signed outbound webhooks to tenants (docs/outbound-webhooks.md).
 *
 * - `webhook_endpoints`: the tenant's receivers (URL, event types, enabled and why not), the
 *   signing secret and, during a rotation's overlap, the previous one; both vault envelopes,
 *   never plaintext. `task_queue`: the queue whose worker dispatches its deliveries.
 * - `outbound_events`: one row per event, its JSON body exactly as sent (signatures cover it).
 * - `outbound_deliveries`: one per (event, endpoint); `outbound_attempts`: one per HTTP attempt.
 * - `outbound_outbox`: not a tenant table (the tenant rides inside `handover`, as in
 *   `webhook_outbox`); the worker's dispatcher hands rows to Temporal and deletes them.
 *
 * Transactional outbox: `record_outbound_event` writes the event, its deliveries and their
 * outbox rows in the transaction of the state change that caused it, called by triggers on
 * entitlements, subscriptions, sync_runs and webhook_deliveries. So every path that changes
 * an entitlement (web lifecycle, store registration, store notification) emits, nothing is
 * lost on a crash, and the inbound path pays one indexed lookup when the tenant has no
 * endpoint wanting the event, and a few inserts when it has. The function is SECURITY DEFINER
 * (the owner's `*_system` policies): the inbound failure trigger fires outside any tenant
 * transaction, as the login role, which holds no right on these tables. Inside a tenant
 * transaction it refuses to write for any other tenant.
 */
export const OUTBOUND_TENANT_TABLES = [
  'webhook_endpoints',
  'outbound_events',
  'outbound_deliveries',
  'outbound_attempts',
] as const;

export async function up(knex: Knex): Promise<void> {
  const schema = (await knex.raw('select current_schema() as s')).rows[0].s as string;
  const path = `set search_path = "${schema.replace(/"/g, '""')}", pg_temp`;
  await knex.raw(`create table webhook_endpoints (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants(id) on delete cascade,
      url text not null,
      description text,
      event_types text[] not null default '{}',
      enabled boolean not null default true,
      disabled_reason text,
      secret_enc text not null,
      previous_secret_enc text,
      previous_secret_expires_at timestamptz,
      secret_rotated_at timestamptz,
      task_queue text not null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now())`);
  await knex.raw('create index webhook_endpoints_enabled on webhook_endpoints (tenant_id) where enabled');
  await knex.raw(`create table outbound_events (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants(id) on delete cascade,
      type text not null,
      order_key text not null,
      body jsonb not null,
      created_at timestamptz not null default now())`);
  await knex.raw('create index outbound_events_list on outbound_events (tenant_id, created_at desc, id desc)');
  await knex.raw(`create table outbound_deliveries (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants(id) on delete cascade,
      event_id uuid not null references outbound_events(id) on delete cascade,
      endpoint_id uuid not null references webhook_endpoints(id) on delete cascade,
      status text not null default 'pending' check (status in ('pending','succeeded','failed')),
      attempts integer not null default 0,
      last_status_code integer,
      reason text,
      delivered_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      unique (event_id, endpoint_id))`);
  await knex.raw('create index outbound_deliveries_list on outbound_deliveries (tenant_id, created_at desc, id desc)');
  await knex.raw(
    "create index outbound_deliveries_failed on outbound_deliveries (tenant_id, updated_at) where status = 'failed'",
  );
  await knex.raw(`create table outbound_attempts (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants(id) on delete cascade,
      delivery_id uuid not null references outbound_deliveries(id) on delete cascade,
      attempt integer not null,
      status_code integer,
      latency_ms integer not null,
      response_excerpt text,
      error text,
      created_at timestamptz not null default now())`);
  await knex.raw('create index outbound_attempts_list on outbound_attempts (tenant_id, delivery_id, created_at desc)');
  await knex.raw(`create table outbound_outbox (
      id bigserial primary key,
      delivery_id uuid not null unique references outbound_deliveries(id) on delete cascade,
      task_queue text not null,
      handover jsonb not null,
      attempts integer not null default 0,
      next_attempt_at timestamptz not null default now(),
      last_error text,
      created_at timestamptz not null default now())`);
  await knex.raw('create index outbound_outbox_due on outbound_outbox (task_queue, next_attempt_at)');

  for (const table of OUTBOUND_TENANT_TABLES) await tenantTablePolicies(knex, table);
  // The dispatcher (temporal/outbound-dispatcher.ts) runs before any tenant is known; replays queue rows from a tenant
  // transaction.
  await knex.raw(`grant select, insert, update, delete on outbound_outbox to ${LOGIN_ROLE}`);
  await knex.raw(`grant insert, select (delivery_id) on outbound_outbox to ${APP_ROLE}`);
  await knex.raw(`grant usage on sequence outbound_outbox_id_seq to ${LOGIN_ROLE}, ${APP_ROLE}`);

  // Does any enabled endpoint of the tenant want this type? (An empty list wants every type.)
  await knex.raw(`create function outbound_wanted(p_tenant uuid, p_type text) returns boolean
    language sql stable security definer ${path} as $fn$
      select exists (select 1 from webhook_endpoints e where e.tenant_id = p_tenant and e.enabled
                      and (cardinality(e.event_types) = 0 or p_type = any(e.event_types)))
    $fn$`);
  // One event, a delivery per wanting endpoint and their outbox rows. The subject (an app user)
  // orders deliveries: events of one subject reach an endpoint in order; none: unordered.
  await knex.raw(`create function record_outbound_event(p_tenant uuid, p_type text, p_subject text, p_data jsonb) returns uuid
    language plpgsql volatile security definer ${path} as $fn$
    declare
      v_event uuid := gen_random_uuid();
      v_key text;
      v_own text := nullif(current_setting('app.tenant_id', true), '');
    begin
      if v_own is not null and v_own::uuid <> p_tenant then
        raise exception 'record_outbound_event: tenant % may not record events of another tenant', v_own;
      end if;
      if not outbound_wanted(p_tenant, p_type) then return null; end if;
      v_key := case when p_subject is null then 'evt-' || v_event
                    else 'sub-' || left(encode(sha256(convert_to(p_tenant::text || ':' || p_subject, 'UTF8')), 'hex'), 32) end;
      insert into outbound_events (id, tenant_id, type, order_key, body)
        values (v_event, p_tenant, p_type, v_key, jsonb_build_object(
          'id', v_event, 'type', p_type, 'version', 1,
          'timestamp', to_char(clock_timestamp() at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
          'data', p_data));
      with d as (
        insert into outbound_deliveries (tenant_id, event_id, endpoint_id)
          select p_tenant, v_event, e.id from webhook_endpoints e
           where e.tenant_id = p_tenant and e.enabled and (cardinality(e.event_types) = 0 or p_type = any(e.event_types))
        returning id, endpoint_id)
      insert into outbound_outbox (delivery_id, task_queue, handover)
        select d.id, e.task_queue, jsonb_build_object('tenantId', p_tenant, 'endpointId', d.endpoint_id, 'deliveryId', d.id)
          from d join webhook_endpoints e on e.id = d.endpoint_id;
      return v_event;
    end $fn$`);

  // Only a tenant transaction may call them (the triggers run them as their owner): the login role
  // outside one, which knows no tenant, cannot record an event for anyone.
  for (const f of ['record_outbound_event(uuid, text, text, jsonb)', 'outbound_wanted(uuid, text)']) {
    await knex.raw(`revoke execute on function ${f} from public`);
    await knex.raw(`grant execute on function ${f} to ${APP_ROLE}`);
  }

  // ── What emits. Each trigger checks outbound_wanted first, so a tenant without endpoints pays one lookup.
  await knex.raw(`create function outbound_on_entitlement() returns trigger
    language plpgsql security definer ${path} as $fn$
    declare v_status text; v_sku text;
    begin
      if not outbound_wanted(new.tenant_id, 'entitlement.' || new.state) then return null; end if;
      select s.status into v_status from subscriptions s where s.id = new.subscription_id;
      select p.sku into v_sku from products p where p.id = new.product_id;
      perform record_outbound_event(new.tenant_id, 'entitlement.' || new.state, new.app_user_id, jsonb_build_object(
        'app_user_id', new.app_user_id, 'state', new.state,
        'previous_state', case when tg_op = 'UPDATE' then old.state end,
        'reason', v_status, 'provider', new.provider, 'product_id', new.product_id, 'sku', v_sku,
        'subscription_id', new.subscription_id, 'is_sandbox', new.is_sandbox,
        'expires_at', new.expires_at, 'grace_until', new.grace_until));
      return null;
    end $fn$`);
  await knex.raw(`create trigger outbound_entitlement_insert after insert on entitlements
    for each row execute function outbound_on_entitlement()`);
  await knex.raw(`create trigger outbound_entitlement_update after update of state on entitlements
    for each row when (old.state is distinct from new.state) execute function outbound_on_entitlement()`);

  await knex.raw(`create function outbound_on_subscription() returns trigger
    language plpgsql security definer ${path} as $fn$
    declare v_sku text;
    begin
      if not outbound_wanted(new.tenant_id, 'subscription.status_changed') then return null; end if;
      select p.sku into v_sku from products p where p.id = new.product_id;
      -- The same subject as the entitlement it leads to (activities/lifecycle.ts names the app user that way).
      perform record_outbound_event(new.tenant_id, 'subscription.status_changed',
        coalesce(new.app_user_id, new.email, new.customer_external_id, new.external_id), jsonb_build_object(
        'subscription_id', new.id, 'provider', new.provider, 'external_id', new.external_id,
        'status', new.status, 'previous_status', case when tg_op = 'UPDATE' then old.status end,
        'app_user_id', new.app_user_id, 'product_id', new.product_id, 'sku', v_sku, 'mode', new.mode,
        'current_period_end', new.current_period_end, 'canceled_at', new.canceled_at));
      return null;
    end $fn$`);
  await knex.raw(`create trigger outbound_subscription_insert after insert on subscriptions
    for each row execute function outbound_on_subscription()`);
  await knex.raw(`create trigger outbound_subscription_update after update of status on subscriptions
    for each row when (old.status is distinct from new.status) execute function outbound_on_subscription()`);

  await knex.raw(`create function outbound_on_sync_run() returns trigger
    language plpgsql security definer ${path} as $fn$
    begin
      perform record_outbound_event(new.tenant_id, 'sync_run.finished', null, jsonb_build_object(
        'run_id', new.id, 'kind', new.kind, 'status', new.status, 'finished_at', new.finished_at,
        'result', new.result));
      return null;
    end $fn$`);
  await knex.raw(`create trigger outbound_sync_run_finished after update of status on sync_runs
    for each row when (old.status = 'running' and new.status <> 'running') execute function outbound_on_sync_run()`);

  await knex.raw(`create function outbound_on_inbound_failure() returns trigger
    language plpgsql security definer ${path} as $fn$
    begin
      perform record_outbound_event(new.tenant_id, 'inbound_delivery.failed', null, jsonb_build_object(
        'delivery_id', new.id, 'provider', new.provider, 'event_id', new.event_id, 'event_type', new.event_type,
        'mode', new.mode, 'reason', new.reason));
      return null;
    end $fn$`);
  await knex.raw(`create trigger outbound_inbound_failed_insert after insert on webhook_deliveries
    for each row when (new.status = 'failed' and new.tenant_id is not null) execute function outbound_on_inbound_failure()`);
  await knex.raw(`create trigger outbound_inbound_failed_update after update of status on webhook_deliveries
    for each row when (new.status = 'failed' and old.status is distinct from 'failed' and new.tenant_id is not null)
    execute function outbound_on_inbound_failure()`);

  // Readiness is judged on read (domain/readiness.ts); the last summary sent is kept per tenant to tell a change.
  await knex.raw(`alter table tenants add column if not exists outbound_readiness jsonb`);
  await knex.raw(`grant update (outbound_readiness) on tenants to ${APP_ROLE}`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop trigger if exists outbound_inbound_failed_update on webhook_deliveries');
  await knex.raw('drop trigger if exists outbound_inbound_failed_insert on webhook_deliveries');
  await knex.raw('drop trigger if exists outbound_sync_run_finished on sync_runs');
  await knex.raw('drop trigger if exists outbound_subscription_update on subscriptions');
  await knex.raw('drop trigger if exists outbound_subscription_insert on subscriptions');
  await knex.raw('drop trigger if exists outbound_entitlement_update on entitlements');
  await knex.raw('drop trigger if exists outbound_entitlement_insert on entitlements');
  for (const f of [
    'outbound_on_inbound_failure()',
    'outbound_on_sync_run()',
    'outbound_on_subscription()',
    'outbound_on_entitlement()',
    'record_outbound_event(uuid, text, text, jsonb)',
    'outbound_wanted(uuid, text)',
  ])
    await knex.raw(`drop function if exists ${f}`);
  await knex.raw('drop table if exists outbound_outbox');
  for (const t of [...OUTBOUND_TENANT_TABLES].reverse()) await knex.raw(`drop table if exists ${t}`);
  await knex.raw('alter table tenants drop column if exists outbound_readiness');
}
