import type { Knex } from 'knex';

/**
 * Every repair is told to the tenant's endpoints as `subscription.reconciled`
 * (docs/outbound-webhooks.md, docs/reconciliation.md), written by a trigger in the same
 * transaction as the repair row, like the other outbound events (migration 018): a repair is
 * never recorded without its event, nor an event sent for a repair that rolled back. The body
 * carries what differed and what was applied: states, dates and ids, nothing personal.
 */
async function searchPath(knex: Knex): Promise<string> {
  const schema = (await knex.raw('select current_schema() as s')).rows[0].s as string;
  return `set search_path = "${schema.replace(/"/g, '""')}", pg_temp`;
}

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`create function outbound_on_reconciliation() returns trigger
    language plpgsql security definer ${await searchPath(knex)} as $fn$
    begin
      perform record_outbound_event(new.tenant_id, 'subscription.reconciled', new.app_user_id, jsonb_build_object(
        'reconciliation_id', new.id, 'run_id', new.run_id, 'provider', new.provider,
        'external_id', new.subscription_external_id, 'app_user_id', new.app_user_id,
        'held', new.held, 'provider_state', new.provider_state, 'applied', new.applied));
      return null;
    end $fn$`);
  await knex.raw(`create trigger outbound_reconciliation_insert after insert on reconciliations
    for each row execute function outbound_on_reconciliation()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop trigger if exists outbound_reconciliation_insert on reconciliations');
  await knex.raw('drop function if exists outbound_on_reconciliation()');
}
