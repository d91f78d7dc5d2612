import type { Knex } from 'knex';

/**
 * An import writes entitlements the tenant's backend already knows from the system it moves
 * from: by default it sends no `entitlement.*` or `subscription.status_changed` event to the
 * tenant's endpoints (docs/reconciliation.md, "Outbound events"). The import's write sets
 * `app.outbound_quiet` for its own transaction (`set_config(…, true)`); every trigger asks
 * `outbound_wanted` first, which now answers no for those types in such a transaction.
 * Everything else (webhooks, reconciliation repairs, the timers) is unchanged.
 */
const QUIET = `coalesce(current_setting('app.outbound_quiet', true), '') = 'on'
  and (p_type like 'entitlement.%' or p_type = 'subscription.status_changed')`;

async function searchPath(knex: Knex): Promise<string> {
  const schema = (await knex.raw('select current_schema() as s')).rows[0].s as string;
  return `set search_path = "${schema.replace(/"/g, '""')}", pg_temp`;
}

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`create or replace function outbound_wanted(p_tenant uuid, p_type text) returns boolean
    language sql stable security definer ${await searchPath(knex)} as $fn$
      select not (${QUIET}) and exists (select 1 from webhook_endpoints e where e.tenant_id = p_tenant and e.enabled
                      and (cardinality(e.event_types) = 0 or p_type = any(e.event_types)))
    $fn$`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`create or replace function outbound_wanted(p_tenant uuid, p_type text) returns boolean
    language sql stable security definer ${await searchPath(knex)} as $fn$
      select exists (select 1 from webhook_endpoints e where e.tenant_id = p_tenant and e.enabled
                      and (cardinality(e.event_types) = 0 or p_type = any(e.event_types)))
    $fn$`);
}
