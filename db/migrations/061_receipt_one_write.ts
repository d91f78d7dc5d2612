import type { Knex } from 'knex';

/**
 * The webhook receipt writes its delivery row once (docs/provisional-access.md, "Cost on the receive path").
 *
 * - The login role may choose a delivery's id and stamp its `premium_at` in the insert: the receipt decides a
 *   provisional grant before it writes the row (the grant names the row by the id it is about to get), so a granting
 *   receipt no longer inserts the row and then updates it. `mark_receipt_premium`, the update, goes.
 * - The grant's reference to its delivery is checked at the end of the transaction (the receipt's own statement, in
 *   autocommit): inside the function, the grant is written before the row it names.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('grant insert (id, premium_at) on webhook_deliveries to billing_api');
  await knex.raw('drop function mark_receipt_premium(uuid, uuid)');
  await knex.raw(
    'alter table provisional_access alter constraint provisional_access_delivery_id_fkey deferrable initially deferred',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table provisional_access alter constraint provisional_access_delivery_id_fkey not deferrable');
  await knex.raw(`create function mark_receipt_premium(p_tenant uuid, p_delivery uuid) returns integer
    language sql security definer set search_path to 'public', 'pg_temp'
    as $$
      with u as (update webhook_deliveries set premium_at = now()
                  where id = p_delivery and tenant_id = p_tenant and premium_at is null
                    and created_at = now() returning 1)
      select count(*)::integer from u
    $$`);
  await knex.raw('revoke all on function mark_receipt_premium(uuid, uuid) from public');
  await knex.raw('grant all on function mark_receipt_premium(uuid, uuid) to billing_api');
  await knex.raw('revoke insert (id, premium_at) on webhook_deliveries from billing_api');
}
