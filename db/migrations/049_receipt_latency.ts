import type { Knex } from 'knex';
import { LOGIN_ROLE } from '../login-role';

/**
 * What the overview's lag figures read (db/overview-latency.ts, docs/operations.md "Objectives").
 *
 * - `webhook_deliveries.premium_at`: when the delivery's receipt granted provisional access (the
 *   grant row itself is deleted once the authoritative write supersedes it, so its time is kept
 *   here). Set by `mark_receipt_premium`, which the receiver's statement calls after a grant: a
 *   SECURITY DEFINER function, as the login role may insert deliveries but not update them. It
 *   touches only a row of that statement not yet marked.
 * - An index on delivered outbound deliveries by time, for the event → delivered figure of the
 *   last hour.
 */
async function searchPath(knex: Knex): Promise<string> {
  const schema = (await knex.raw('select current_schema() as s')).rows[0].s as string;
  return `set search_path = "${schema.replace(/"/g, '""')}", pg_temp`;
}

export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table webhook_deliveries add column premium_at timestamptz');
  await knex.raw(
    `create index outbound_deliveries_delivered on outbound_deliveries (tenant_id, delivered_at) where status = 'succeeded'`,
  );
  const path = await searchPath(knex);
  await knex.raw(`create function mark_receipt_premium(p_tenant uuid, p_delivery uuid)
    returns integer language sql security definer ${path} as $fn$
      with u as (update webhook_deliveries set premium_at = now()
                  where id = p_delivery and tenant_id = p_tenant and premium_at is null
                    and created_at = now() returning 1)
      select count(*)::integer from u
    $fn$`);
  await knex.raw('revoke execute on function mark_receipt_premium(uuid, uuid) from public');
  await knex.raw(`grant execute on function mark_receipt_premium(uuid, uuid) to ${LOGIN_ROLE}`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop function if exists mark_receipt_premium(uuid, uuid)');
  await knex.raw('drop index if exists outbound_deliveries_delivered');
  await knex.raw('alter table webhook_deliveries drop column if exists premium_at');
}
