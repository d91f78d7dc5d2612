import type { Knex } from 'knex';

/**
 * A merge is an event (docs/transfers.md, "Aliases are not transfers"; docs/event-proofs.md,
 * "Following a merged id"): `customer.merged` on the surviving customer's chain, and the merged
 * id's own chain ends at it.
 *
 * - `customer_event_sequences.merged_into`: the chain this id's events continue on since it was
 *   merged (set under the merged id's row lock), and `merged_sequence`, the `sequence` of the
 *   `customer.merged` event there. What a receiver that knows only the merged id follows.
 * - `record_customer_merge(tenant, from, into)`: closes `from`'s chain under its row lock, then
 *   records `customer.merged` about `into` through `record_outbound_event`, carrying `from`'s last
 *   `sequence` and `hash`, so the event (hashed on the surviving chain) commits to the head of the
 *   chain it ends.
 * - `record_outbound_event` (074's, replaced): a chain closed by a merge takes no more events. An
 *   event resolved to an id before a merge committed (it read no alias yet) waits on that id's row
 *   lock; past it, it sees the chain closed and follows the alias to the customer's chain, so no
 *   event lands on a chain after the event that ended it. A chain closed by a merge an erasure has
 *   since undone (the alias deleted) opens again. The rest is 074's.
 */
const QUIET = `coalesce(current_setting('app.outbound_quiet', true), '') = 'on'`;

/** How many aliases reads follow (domain/aliases.ts MAX_ALIASES). */
const MAX_ALIASES = 10;

const snapshot = (who: (table: string) => string) => `coalesce((
          select jsonb_agg(x.e order by x.at, x.id) from (
            select e.created_at as at, e.id, jsonb_build_object('source', 'paid', 'provider', e.provider,
                'product_id', e.product_id, 'sku', p.sku, 'state', e.state, 'is_sandbox', e.is_sandbox,
                'expires_at', e.expires_at, 'grace_until', e.grace_until) as e
              from entitlements e left join products p on p.id = e.product_id and p.tenant_id = e.tenant_id
             where e.tenant_id = p_tenant and ${who('e')}
            union all
            select g.created_at, g.id, jsonb_build_object('source', 'grant', 'grant_id', g.id, 'provider', null,
                'product_id', g.product_id, 'sku', p.sku, 'state', g.state, 'is_sandbox', false,
                'expires_at', g.expires_at, 'grace_until', null)
              from entitlement_grants g left join products p on p.id = g.product_id and p.tenant_id = g.tenant_id
             where g.tenant_id = p_tenant and ${who('g')} and g.state = 'active') x), '[]'::jsonb)`;

const DELIVERIES = `
      with d as (
        insert into outbound_deliveries (tenant_id, event_id, endpoint_id)
          select p_tenant, v_event, e.id from webhook_endpoints e
           where e.tenant_id = p_tenant and e.enabled and (cardinality(e.event_types) = 0 or p_type = any(e.event_types))
        returning id, endpoint_id)
      insert into outbound_outbox (delivery_id, task_queue, handover)
        select d.id, e.task_queue, jsonb_build_object('tenantId', p_tenant, 'endpointId', d.endpoint_id, 'deliveryId', d.id)
          from d join webhook_endpoints e on e.id = d.endpoint_id;`;

/** `closedChains` false: 074's function exactly (the down migration). */
function record(closedChains: boolean): string {
  // The row lock on the subject's sequence numbers and chains its events one at a time.
  const number = closedChains
    ? `
        loop
          insert into customer_event_sequences as s (tenant_id, subject, seq) values (p_tenant, v_subject, 1)
            on conflict (tenant_id, subject) do update set seq = s.seq + 1 where s.merged_into is null
            returning seq, last_hash into v_seq, v_prev;
          exit when v_seq is not null;
          -- The chain was closed by a merge (the row is locked now, the merge committed): follow the alias.
          v_hops := v_hops + 1;
          if v_hops > ${MAX_ALIASES} then
            raise exception 'record_outbound_event: the merges of % do not end', p_subject;
          end if;
          select a.app_user_id into v_next from app_user_aliases a where a.tenant_id = p_tenant and a.alias_id = v_subject;
          if v_next is null then
            -- The merge was undone (an erasure deleted the alias): the id is its own customer again.
            update customer_event_sequences set merged_into = null, merged_sequence = null
             where tenant_id = p_tenant and subject = v_subject;
          else
            v_subject := v_next;
          end if;
        end loop;
        select coalesce(array_agg(x.alias_id order by x.created_at, x.alias_id), '{}') into v_known
          from (select alias_id, created_at from app_user_aliases
                 where tenant_id = p_tenant and app_user_id = v_subject
                 order by created_at, alias_id limit ${MAX_ALIASES}) x;
        if v_subject <> p_subject and v_data->>'app_user_id' = p_subject then
          v_data := v_data || jsonb_build_object('app_user_id', v_subject);
        end if;
        v_data := v_data || jsonb_build_object('known_as', to_jsonb(v_known));`
    : `
        insert into customer_event_sequences as s (tenant_id, subject, seq) values (p_tenant, v_subject, 1)
          on conflict (tenant_id, subject) do update set seq = s.seq + 1
          returning seq, last_hash into v_seq, v_prev;`;
  const resolve = `
        -- One customer, one chain: an id merged into another is that one's (domain/aliases.ts). Past RLS
        -- (security definer), so the tenant is named.
        select a.app_user_id into v_canon from app_user_aliases a where a.tenant_id = p_tenant and a.alias_id = p_subject;
        v_subject := coalesce(v_canon, p_subject);${
          closedChains
            ? ''
            : `
        select coalesce(array_agg(x.alias_id order by x.created_at, x.alias_id), '{}') into v_known
          from (select alias_id, created_at from app_user_aliases
                 where tenant_id = p_tenant and app_user_id = v_subject
                 order by created_at, alias_id limit ${MAX_ALIASES}) x;
        -- The event names the customer; the id its rows are stored under is among known_as.
        if v_canon is not null and v_data->>'app_user_id' = p_subject then
          v_data := v_data || jsonb_build_object('app_user_id', v_subject);
        end if;
        v_data := v_data || jsonb_build_object('known_as', to_jsonb(v_known));`
        }`;
  const who = (t: string) => `${t}.app_user_id = any(array_prepend(v_subject, v_known))`;
  // 074 numbered after the key; here the key follows the chain the number was taken on.
  const key = `
      v_key := case when p_subject is null then 'evt-' || v_event
                    else 'sub-' || left(encode(sha256(convert_to(p_tenant::text || ':' || v_subject, 'UTF8')), 'hex'), 32) end;`;
  const chain = `
        v_data := v_data || jsonb_build_object('sequence', v_seq, 'entitlements', ${snapshot(who)},
          'prev_hash', coalesce(v_prev, repeat('0', 64)));
        v_data := v_data || jsonb_build_object('hash', encode(sha256(convert_to(jcs(event_proof_form(v_data)), 'UTF8')), 'hex'));
        update customer_event_sequences set last_hash = v_data->>'hash'
         where tenant_id = p_tenant and subject = v_subject;`;
  const body = closedChains
    ? `
      if p_subject is not null then${resolve}${number}${chain}
      end if;${key}`
    : `
      if p_subject is not null then${resolve}
      end if;${key}
      if p_subject is not null then
        -- The row lock taken here numbers and chains the customer's events one at a time.${number}${chain}
      end if;`;
  return `
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
      v_canon text;
      v_subject text := p_subject;
      v_known text[] := '{}';${closedChains ? `\n      v_next text;\n      v_hops int := 0;` : ''}
    begin
      if v_own is not null and v_own::uuid <> p_tenant then
        raise exception 'record_outbound_event: tenant % may not record events of another tenant', v_own;
      end if;
      -- An event about a customer is recorded (and chained) whether or not an endpoint wants it; an
      -- import's writes are not events. Any other event only when an endpoint wants it.
      if p_subject is null and not outbound_wanted(p_tenant, p_type) then return null; end if;
      if p_subject is not null and ${QUIET}
         and (p_type like 'entitlement.%' or p_type = 'subscription.status_changed') then return null; end if;${body}
      insert into outbound_events (id, tenant_id, type, order_key, body, sequence)
        values (v_event, p_tenant, p_type, v_key, jsonb_build_object(
          'id', v_event, 'type', p_type, 'version', 1,
          'timestamp', to_char(clock_timestamp() at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
          'data', v_data), v_seq);
      ${DELIVERIES}
      return v_event;
    end $$;`;
}

const RECORD_MERGE = `
CREATE FUNCTION public.record_customer_merge(p_tenant uuid, p_from text, p_into text) RETURNS uuid
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
    declare
      v_own text := nullif(current_setting('app.tenant_id', true), '');
      v_seq bigint;
      v_hash text;
      v_event uuid;
      v_at bigint;
      v_chain text;
    begin
      if v_own is not null and v_own::uuid <> p_tenant then
        raise exception 'record_customer_merge: tenant % may not record events of another tenant', v_own;
      end if;
      -- The id merged into is a customer of its own (domain/aliases.ts): a chain of it closed by a merge
      -- an erasure undid opens again, so the two never point at each other.
      update customer_event_sequences set merged_into = null, merged_sequence = null
       where tenant_id = p_tenant and subject = p_into and merged_into is not null;
      -- Close the merged id's chain under its row lock: what it holds now is all it will hold.
      insert into customer_event_sequences as s (tenant_id, subject, seq, merged_into) values (p_tenant, p_from, 0, p_into)
        on conflict (tenant_id, subject) do update set merged_into = excluded.merged_into, merged_sequence = null
        returning seq, last_hash into v_seq, v_hash;
      v_event := record_outbound_event(p_tenant, 'customer.merged', p_into, jsonb_build_object(
        'app_user_id', p_into, 'merged_app_user_id', p_from, 'merged_sequence', v_seq, 'merged_hash', v_hash));
      select e.sequence, e.body->'data'->>'app_user_id' into v_at, v_chain
        from outbound_events e where e.tenant_id = p_tenant and e.id = v_event;
      update customer_event_sequences set merged_into = v_chain, merged_sequence = v_at
       where tenant_id = p_tenant and subject = p_from;
      return v_event;
    end $$;
REVOKE ALL ON FUNCTION public.record_customer_merge(uuid, text, text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.record_customer_merge(uuid, text, text) TO billing_app;`;

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('customer_event_sequences', (t) => {
    t.text('merged_into');
    t.bigInteger('merged_sequence');
  });
  await knex.raw(record(true));
  await knex.raw(RECORD_MERGE);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop function public.record_customer_merge(uuid, text, text)');
  await knex.raw(record(false));
  await knex.schema.alterTable('customer_event_sequences', (t) => {
    t.dropColumn('merged_into');
    t.dropColumn('merged_sequence');
  });
}
