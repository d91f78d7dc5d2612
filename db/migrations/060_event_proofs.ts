import type { Knex } from 'knex';
import { LOGIN_ROLE } from '../login-role';
import { tenantTablePolicies } from './tenant-policies';

/**
 * Events you can prove, signed daily digests and exports (docs/event-proofs.md, docs/exports.md).
 *
 * - `jcs(jsonb)`: RFC 8785 canonical JSON of a value (keys in code-point order, no whitespace,
 *   strings escaped as JSON.stringify does, numbers as ECMAScript prints them).
 * - `record_outbound_event` (replaced; it was the baseline's, where the receive path writes
 *   events too): an event about a customer is recorded and chained whether or not an endpoint
 *   wants its type (deliveries are still made only for the endpoints that want it). Under the
 *   per-customer row lock that numbers it, `data` gains `prev_hash` (the customer's last `hash`,
 *   64 zeros for the first) and `hash`, the hex SHA-256 of `jcs(data without hash)`.
 *   `customer_event_sequences.last_hash` keeps the head; `outbound_events.sequence` the number.
 *   The only change to the statement that writes the event is those columns and the early
 *   return: an import's writes (`app.outbound_quiet`) still record nothing.
 * - The triggers' functions for entitlements, grants and subscriptions no longer return early
 *   when no endpoint wants the type (the same functions otherwise).
 * - `event_digests`, `exports`, `export_files`, `export_file_parts`: tenant tables.
 */
const EVENT_PROOF_TENANT_TABLES = ['event_digests', 'exports', 'export_files', 'export_file_parts'] as const;

const QUIET = `coalesce(current_setting('app.outbound_quiet', true), '') = 'on'`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(JCS);
  await knex.schema.alterTable('customer_event_sequences', (t) => {
    t.text('last_hash');
  });
  await knex.schema.alterTable('outbound_events', (t) => {
    t.bigInteger('sequence');
  });
  await knex.raw(`create index outbound_events_chain on outbound_events (tenant_id, order_key, sequence)
    where sequence is not null`);
  await knex.raw(`create index outbound_events_chained_day on outbound_events (created_at, tenant_id)
    where sequence is not null`);
  await knex.raw(RECORD);
  await knex.raw(triggerFunctions(true));

  await knex.schema.createTable('event_digests', (t) => {
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.date('day').notNullable();
    t.bigInteger('events').notNullable();
    t.integer('chains').notNullable();
    t.text('root').notNullable();
    t.text('signature').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['tenant_id', 'day']);
  });
  await tenantTablePolicies(knex, 'event_digests');
  // The daily Schedule's list: tenants with chained events that day and no digest yet (past RLS, ids only).
  await knex.raw(`create function public.event_digest_tenants(p_day date, p_max integer) returns setof uuid
      language sql stable security definer
      set search_path to 'public', 'pg_temp'
      as $$
        select distinct e.tenant_id from outbound_events e
         where e.sequence is not null
           and e.created_at >= (p_day::timestamp at time zone 'UTC')
           and e.created_at < ((p_day + 1)::timestamp at time zone 'UTC')
           and not exists (select 1 from event_digests d where d.tenant_id = e.tenant_id and d.day = p_day)
         limit p_max
      $$`);
  await knex.raw(`revoke all on function public.event_digest_tenants(date, integer) from public`);
  await knex.raw(`do $$ begin
      if exists (select 1 from pg_roles where rolname = '${LOGIN_ROLE}') then
        execute 'grant execute on function public.event_digest_tenants(date, integer) to ${LOGIN_ROLE}';
      end if; end $$`);

  await knex.schema.createTable('exports', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.text('format').notNullable();
    t.timestamp('since', { useTz: true });
    t.text('status').notNullable().defaultTo('running');
    t.text('error');
    t.text('workflow_id').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('finished_at', { useTz: true });
    t.unique(['tenant_id', 'id']);
  });
  await knex.raw(`alter table exports add constraint exports_format check (format in ('parquet', 'csv'))`);
  await knex.raw(
    `alter table exports add constraint exports_status check (status in ('running', 'succeeded', 'failed'))`,
  );
  // One export running per tenant: the second is refused (409 export_running).
  await knex.raw(`create unique index exports_one_running on exports (tenant_id) where status = 'running'`);
  await knex.raw(`create index exports_list on exports (tenant_id, created_at desc)`);
  await tenantTablePolicies(knex, 'exports');

  await knex.schema.createTable('export_files', (t) => {
    t.uuid('tenant_id').notNullable();
    t.uuid('export_id').notNullable();
    t.text('name').notNullable();
    t.text('table_name').notNullable();
    t.bigInteger('rows').notNullable();
    t.bigInteger('bytes').notNullable();
    t.text('sha256').notNullable();
    t.integer('parts').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['export_id', 'name']);
  });
  await knex.raw(`alter table export_files add constraint export_files_export
    foreign key (tenant_id, export_id) references exports (tenant_id, id) on delete cascade`);
  await tenantTablePolicies(knex, 'export_files');

  await knex.schema.createTable('export_file_parts', (t) => {
    t.uuid('tenant_id').notNullable();
    t.uuid('export_id').notNullable();
    t.text('name').notNullable();
    t.integer('part').notNullable();
    t.binary('data').notNullable();
    t.primary(['export_id', 'name', 'part']);
  });
  await knex.raw(`alter table export_file_parts add constraint export_file_parts_file
    foreign key (export_id, name) references export_files (export_id, name) on delete cascade`);
  await knex.raw(`alter table export_file_parts add constraint export_file_parts_export
    foreign key (tenant_id, export_id) references exports (tenant_id, id) on delete cascade`);
  await tenantTablePolicies(knex, 'export_file_parts');
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [...EVENT_PROOF_TENANT_TABLES].reverse()) await knex.schema.dropTable(table);
  await knex.raw('drop function event_digest_tenants(date, integer)');
  await knex.raw(triggerFunctions(false));
  await knex.raw(RECORD_BEFORE);
  await knex.raw('drop index outbound_events_chain');
  await knex.raw('drop index outbound_events_chained_day');
  await knex.schema.alterTable('outbound_events', (t) => t.dropColumn('sequence'));
  await knex.schema.alterTable('customer_event_sequences', (t) => t.dropColumn('last_hash'));
  await knex.raw('drop function jcs(jsonb)');
  await knex.raw('drop function jcs_number(numeric)');
}

/**
 * RFC 8785. Keys are ordered by code point ("C" collation); RFC 8785 orders by UTF-16 unit, which
 * differs only for keys mixing characters above U+FFFF with ones in U+E000–U+FFFF.
 */
const JCS = String.raw`
create function public.jcs_number(n numeric) returns text
    language plpgsql immutable strict
    set search_path to 'public', 'pg_temp'
    as $$
    declare s text; mant text; digits text; sign text := ''; e int; k int; p int;
    begin
      if n = trunc(n) and abs(n) < 9007199254740992 then return trunc(n)::text; end if;
      -- As a double, then ECMAScript's Number::toString from its shortest digits.
      s := (n::float8)::text;
      if left(s, 1) = '-' then sign := '-'; s := substr(s, 2); end if;
      if position('e' in s) > 0 then
        mant := split_part(s, 'e', 1); e := split_part(s, 'e', 2)::int;
      else
        mant := s; e := 0;
      end if;
      -- mant is d[.ddd] or ddd.ddd (no exponent): normalise to digits with the point after p of them.
      p := coalesce(nullif(position('.' in mant), 0) - 1, length(mant)) + e;
      digits := replace(mant, '.', '');
      -- Leading zeros (0.00123) move the point left.
      while length(digits) > 1 and left(digits, 1) = '0' loop digits := substr(digits, 2); p := p - 1; end loop;
      digits := rtrim(digits, '0');
      if digits = '' then return '0'; end if;
      k := length(digits);
      if k <= p and p <= 21 then return sign || digits || repeat('0', p - k); end if;
      if 0 < p and p <= 21 then return sign || left(digits, p) || '.' || substr(digits, p + 1); end if;
      if -6 < p and p <= 0 then return sign || '0.' || repeat('0', -p) || digits; end if;
      return sign || left(digits, 1) || case when k > 1 then '.' || substr(digits, 2) else '' end
        || 'e' || case when p - 1 >= 0 then '+' else '-' end || abs(p - 1)::text;
    end $$;

create function public.jcs(v jsonb) returns text
    language plpgsql immutable strict
    set search_path to 'public', 'pg_temp'
    as $$
    declare r text;
    begin
      case jsonb_typeof(v)
        when 'object' then
          select '{' || coalesce(string_agg(to_json(key)::text || ':' || jcs(value), ',' order by key collate "C"), '') || '}'
            into r from jsonb_each(v);
          return r;
        when 'array' then
          select '[' || coalesce(string_agg(jcs(value), ',' order by ord), '') || ']'
            into r from jsonb_array_elements(v) with ordinality as a(value, ord);
          return r;
        when 'string' then return to_json(v #>> '{}')::text;
        when 'number' then return jcs_number((v #>> '{}')::numeric);
        else return v::text;
      end case;
    end $$;
grant execute on function public.jcs(jsonb) to billing_app;
grant execute on function public.jcs_number(numeric) to billing_app;
`;

const SNAPSHOT = `coalesce((
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
             where g.tenant_id = p_tenant and g.app_user_id = p_subject and g.state = 'active') x), '[]'::jsonb)`;

const DELIVERIES = `
      with d as (
        insert into outbound_deliveries (tenant_id, event_id, endpoint_id)
          select p_tenant, v_event, e.id from webhook_endpoints e
           where e.tenant_id = p_tenant and e.enabled and (cardinality(e.event_types) = 0 or p_type = any(e.event_types))
        returning id, endpoint_id)
      insert into outbound_outbox (delivery_id, task_queue, handover)
        select d.id, e.task_queue, jsonb_build_object('tenantId', p_tenant, 'endpointId', d.endpoint_id, 'deliveryId', d.id)
          from d join webhook_endpoints e on e.id = d.endpoint_id;`;

const RECORD_HEAD = `
CREATE OR REPLACE FUNCTION public.record_outbound_event(p_tenant uuid, p_type text, p_subject text, p_data jsonb) RETURNS uuid
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
    declare
      v_event uuid := gen_random_uuid();
      v_key text;
      v_own text := nullif(current_setting('app.tenant_id', true), '');
      v_data jsonb := p_data;
      v_seq bigint;
      v_prev text;
    begin
      if v_own is not null and v_own::uuid <> p_tenant then
        raise exception 'record_outbound_event: tenant % may not record events of another tenant', v_own;
      end if;`;

const RECORD = `${RECORD_HEAD}
      -- An event about a customer is recorded (and chained) whether or not an endpoint wants it; an
      -- import's writes are not events. Any other event only when an endpoint wants it.
      if p_subject is null and not outbound_wanted(p_tenant, p_type) then return null; end if;
      if p_subject is not null and ${QUIET}
         and (p_type like 'entitlement.%' or p_type = 'subscription.status_changed') then return null; end if;
      v_key := case when p_subject is null then 'evt-' || v_event
                    else 'sub-' || left(encode(sha256(convert_to(p_tenant::text || ':' || p_subject, 'UTF8')), 'hex'), 32) end;
      if p_subject is not null then
        -- The row lock taken here numbers and chains the customer's events one at a time.
        insert into customer_event_sequences as s (tenant_id, subject, seq) values (p_tenant, p_subject, 1)
          on conflict (tenant_id, subject) do update set seq = s.seq + 1
          returning seq, last_hash into v_seq, v_prev;
        v_data := v_data || jsonb_build_object('sequence', v_seq, 'entitlements', ${SNAPSHOT},
          'prev_hash', coalesce(v_prev, repeat('0', 64)));
        v_data := v_data || jsonb_build_object('hash', encode(sha256(convert_to(jcs(v_data), 'UTF8')), 'hex'));
        update customer_event_sequences set last_hash = v_data->>'hash'
         where tenant_id = p_tenant and subject = p_subject;
      end if;
      insert into outbound_events (id, tenant_id, type, order_key, body, sequence)
        values (v_event, p_tenant, p_type, v_key, jsonb_build_object(
          'id', v_event, 'type', p_type, 'version', 1,
          'timestamp', to_char(clock_timestamp() at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
          'data', v_data), v_seq);
      ${DELIVERIES}
      return v_event;
    end $$;`;

const RECORD_BEFORE = `${RECORD_HEAD}
      if not outbound_wanted(p_tenant, p_type) then return null; end if;
      v_key := case when p_subject is null then 'evt-' || v_event
                    else 'sub-' || left(encode(sha256(convert_to(p_tenant::text || ':' || p_subject, 'UTF8')), 'hex'), 32) end;
      if p_subject is not null then
        insert into customer_event_sequences as s (tenant_id, subject, seq) values (p_tenant, p_subject, 1)
          on conflict (tenant_id, subject) do update set seq = s.seq + 1
          returning seq into v_seq;
        v_data := v_data || jsonb_build_object('sequence', v_seq, 'entitlements', ${SNAPSHOT});
      end if;
      insert into outbound_events (id, tenant_id, type, order_key, body)
        values (v_event, p_tenant, p_type, v_key, jsonb_build_object(
          'id', v_event, 'type', p_type, 'version', 1,
          'timestamp', to_char(clock_timestamp() at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
          'data', v_data));
      ${DELIVERIES}
      return v_event;
    end $$;`;

// `token_invalidated` as migration 058 defined it (docs/outbound-webhooks.md), spelled out again here
// because these functions replace 058's whole bodies: true when the change took away or shortened
// access a token issued before it may still state, false for the service's own timely expiry.
const TOKEN_END = (r: string) =>
  `case when ${r}.state = 'grace_period' then coalesce(${r}.grace_until, ${r}.expires_at) else ${r}.expires_at end`;
const TOKEN_INVALIDATED = `(tg_op = 'UPDATE' and old.state in ('active', 'grace_period')
        and (new.state not in ('active', 'grace_period')
             or coalesce(${TOKEN_END('new')}, 'infinity') < coalesce(${TOKEN_END('old')}, 'infinity'))
        and not (new.state = 'expired' and ${TOKEN_END('old')} is not null
                 and now() >= ${TOKEN_END('old')} and now() < ${TOKEN_END('old')} + interval '1 second'))`;
const GRANT_TOKEN_INVALIDATED = `(tg_op = 'UPDATE' and old.state = 'active' and (new.state <> 'active'
             or coalesce(new.expires_at, 'infinity') < coalesce(old.expires_at, 'infinity')))`;

/** The three customer-event triggers' functions: `chained` drops their early return when no endpoint wants the type. */
function triggerFunctions(chained: boolean): string {
  const skip = (type: string) =>
    chained
      ? `if ${QUIET} then return null; end if;`
      : `if not outbound_wanted(new.tenant_id, ${type}) then return null; end if;`;
  return `
CREATE OR REPLACE FUNCTION public.outbound_on_entitlement() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
    declare v_status text; v_sku text;
    begin
      ${skip(`'entitlement.' || new.state`)}
      select s.status into v_status from subscriptions s where s.id = new.subscription_id and s.tenant_id = new.tenant_id;
      select p.sku into v_sku from products p where p.id = new.product_id and p.tenant_id = new.tenant_id;
      perform record_outbound_event(new.tenant_id, 'entitlement.' || new.state, new.app_user_id, jsonb_build_object(
        'app_user_id', new.app_user_id, 'state', new.state,
        'previous_state', case when tg_op = 'UPDATE' then old.state end,
        'source', 'paid',
        'reason', v_status, 'provider', new.provider, 'product_id', new.product_id, 'sku', v_sku,
        'subscription_id', new.subscription_id, 'is_sandbox', new.is_sandbox,
        'expires_at', new.expires_at, 'grace_until', new.grace_until,
        'token_invalidated', ${TOKEN_INVALIDATED}));
      return null;
    end $$;

CREATE OR REPLACE FUNCTION public.outbound_on_grant() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
    declare v_sku text;
    begin
      ${skip(`'entitlement.' || new.state`)}
      select p.sku into v_sku from products p where p.id = new.product_id and p.tenant_id = new.tenant_id;
      perform record_outbound_event(new.tenant_id, 'entitlement.' || new.state, new.app_user_id, jsonb_build_object(
        'app_user_id', new.app_user_id, 'state', new.state,
        'previous_state', case when tg_op = 'UPDATE' then old.state end,
        'source', 'grant', 'grant_id', new.id,
        'reason', 'grant', 'provider', null, 'product_id', new.product_id, 'sku', v_sku,
        'subscription_id', null, 'is_sandbox', false,
        'expires_at', new.expires_at, 'grace_until', null,
        'token_invalidated', ${GRANT_TOKEN_INVALIDATED}));
      return null;
    end $$;

CREATE OR REPLACE FUNCTION public.outbound_on_subscription() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
    declare v_sku text;
    begin
      ${skip(`'subscription.status_changed'`)}
      select p.sku into v_sku from products p where p.id = new.product_id and p.tenant_id = new.tenant_id;
      -- The same subject as the entitlement it leads to (activities/lifecycle.ts names the app user that way).
      perform record_outbound_event(new.tenant_id, 'subscription.status_changed',
        coalesce(new.app_user_id, new.email, new.customer_external_id, new.external_id), jsonb_build_object(
        'subscription_id', new.id, 'provider', new.provider, 'external_id', new.external_id,
        'status', new.status, 'previous_status', case when tg_op = 'UPDATE' then old.status end,
        'app_user_id', new.app_user_id, 'product_id', new.product_id, 'sku', v_sku, 'mode', new.mode,
        'current_period_end', new.current_period_end, 'canceled_at', new.canceled_at));
      return null;
    end $$;`;
}
