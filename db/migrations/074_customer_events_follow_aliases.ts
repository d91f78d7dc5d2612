import type { Knex } from 'knex';

/**
 * Customer events name the customer (docs/outbound-webhooks.md, "One customer, one chain"): an
 * event about rows stored under an id that was merged into another (an anonymous id signed in, a
 * backend merge: domain/aliases.ts) is about the id it was merged into. `record_outbound_event`
 * (060's, replaced) resolves the subject to that id before it numbers and chains the event, so
 * `app_user_id`, `sequence`, `prev_hash`/`hash` and the delivery order are the customer's; `data`
 * gains `known_as` (the customer's other ids, oldest first, at most 10: what the support API calls
 * them and what the client reads follow), and the entitlement snapshot covers every one of those ids.
 * Events recorded before a merge stay on the chain they were delivered on. The rest is 060's, with
 * 069's hash over the event's proof form (an email as its SHA-256), in both directions: 069 precedes.
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

/** `followAliases` false: 060's function exactly (the down migration). */
function record(followAliases: boolean): string {
  // The customer the subject belongs to, and its other ids: resolved before the event is numbered.
  const resolve = followAliases
    ? `
        -- One customer, one chain: an id merged into another is that one's (domain/aliases.ts). Past RLS
        -- (security definer), so the tenant is named.
        select a.app_user_id into v_canon from app_user_aliases a where a.tenant_id = p_tenant and a.alias_id = p_subject;
        v_subject := coalesce(v_canon, p_subject);
        select coalesce(array_agg(x.alias_id order by x.created_at, x.alias_id), '{}') into v_known
          from (select alias_id, created_at from app_user_aliases
                 where tenant_id = p_tenant and app_user_id = v_subject
                 order by created_at, alias_id limit ${MAX_ALIASES}) x;
        -- The event names the customer; the id its rows are stored under is among known_as.
        if v_canon is not null and v_data->>'app_user_id' = p_subject then
          v_data := v_data || jsonb_build_object('app_user_id', v_subject);
        end if;
        v_data := v_data || jsonb_build_object('known_as', to_jsonb(v_known));`
    : '';
  const subject = followAliases ? 'v_subject' : 'p_subject';
  const who = followAliases
    ? (t: string) => `${t}.app_user_id = any(array_prepend(v_subject, v_known))`
    : (t: string) => `${t}.app_user_id = p_subject`;
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
      v_prev text;${followAliases ? `\n      v_canon text;\n      v_subject text := p_subject;\n      v_known text[] := '{}';` : ''}
    begin
      if v_own is not null and v_own::uuid <> p_tenant then
        raise exception 'record_outbound_event: tenant % may not record events of another tenant', v_own;
      end if;
      -- An event about a customer is recorded (and chained) whether or not an endpoint wants it; an
      -- import's writes are not events. Any other event only when an endpoint wants it.
      if p_subject is null and not outbound_wanted(p_tenant, p_type) then return null; end if;
      if p_subject is not null and ${QUIET}
         and (p_type like 'entitlement.%' or p_type = 'subscription.status_changed') then return null; end if;${
           followAliases ? `\n      if p_subject is not null then${resolve}\n      end if;` : ''
         }
      v_key := case when p_subject is null then 'evt-' || v_event
                    else 'sub-' || left(encode(sha256(convert_to(p_tenant::text || ':' || ${subject}, 'UTF8')), 'hex'), 32) end;
      if p_subject is not null then
        -- The row lock taken here numbers and chains the customer's events one at a time.
        insert into customer_event_sequences as s (tenant_id, subject, seq) values (p_tenant, ${subject}, 1)
          on conflict (tenant_id, subject) do update set seq = s.seq + 1
          returning seq, last_hash into v_seq, v_prev;
        v_data := v_data || jsonb_build_object('sequence', v_seq, 'entitlements', ${snapshot(who)},
          'prev_hash', coalesce(v_prev, repeat('0', 64)));
        v_data := v_data || jsonb_build_object('hash', encode(sha256(convert_to(jcs(event_proof_form(v_data)), 'UTF8')), 'hex'));
        update customer_event_sequences set last_hash = v_data->>'hash'
         where tenant_id = p_tenant and subject = ${subject};
      end if;
      insert into outbound_events (id, tenant_id, type, order_key, body, sequence)
        values (v_event, p_tenant, p_type, v_key, jsonb_build_object(
          'id', v_event, 'type', p_type, 'version', 1,
          'timestamp', to_char(clock_timestamp() at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
          'data', v_data), v_seq);
      ${DELIVERIES}
      return v_event;
    end $$;`;
}

export async function up(knex: Knex): Promise<void> {
  await knex.raw(record(true));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(record(false));
}
