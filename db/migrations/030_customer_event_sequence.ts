import type { Knex } from 'knex';
import { tenantTablePolicies } from './tenant-policies';

/**
 * Outbound events a receiver can trust without racing (docs/outbound-webhooks.md, "Ordering
 * without trust in order"): every event about a customer (an app user, the events' subject)
 * carries `data.sequence`, one more than the customer's previous event, and `data.entitlements`,
 * the customer's whole entitlement snapshot as of that event (paid rows and running grants). A
 * receiver that keeps the snapshot with the highest sequence is right whatever order deliveries
 * arrive in.
 *
 * `customer_event_sequences` holds the last number per (tenant, subject). `record_outbound_event`
 * takes the next one with an upsert, whose row lock also orders two transactions recording for
 * the same customer: the later one reads its snapshot after the earlier one committed (each
 * statement of a READ COMMITTED transaction sees what was committed before it began), so a
 * higher number never carries an older snapshot. Events with no subject (sync runs, readiness,
 * inbound failures) are unchanged.
 */
export const SEQUENCE_TENANT_TABLES = ['customer_event_sequences'] as const;

const recordFunction = (path: string, withSequence: boolean) => `
  create or replace function record_outbound_event(p_tenant uuid, p_type text, p_subject text, p_data jsonb) returns uuid
    language plpgsql volatile security definer ${path} as $fn$
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
      ${
        withSequence
          ? `if p_subject is not null then
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
      end if;`
          : ''
      }
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
    end $fn$`;

async function searchPath(knex: Knex): Promise<string> {
  const schema = (await knex.raw('select current_schema() as s')).rows[0].s as string;
  return `set search_path = "${schema.replace(/"/g, '""')}", pg_temp`;
}

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`create table customer_event_sequences (
      tenant_id uuid not null references tenants(id) on delete cascade,
      subject text not null,
      seq bigint not null,
      primary key (tenant_id, subject))`);
  for (const table of SEQUENCE_TENANT_TABLES) await tenantTablePolicies(knex, table);
  await knex.raw(recordFunction(await searchPath(knex), true));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(recordFunction(await searchPath(knex), false));
  await knex.raw('drop table if exists customer_event_sequences');
}
