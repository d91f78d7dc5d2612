import type { Knex } from 'knex';
import { recordProvisionalAccessSql } from './045_provisional_access';

/**
 * A receipt's grant tells a renewal from a first grant. A checkout's events all grant the same
 * access (the payment, the subscription, its invoice), so only the first changes the premium
 * answer; the receiver woke the app user's waiters after each of them, three notifying statements
 * per purchase where one does anything (bench/RESULTS.md, "Sustained webhook ingest"). The function
 * now answers 2 for a grant made while the same live grant was held, and the receiver wakes
 * waiters only after a first grant (db/webhook-deliveries.ts `storeDelivery`).
 */
async function searchPath(knex: Knex): Promise<string> {
  const schema = (await knex.raw('select current_schema() as s')).rows[0].s as string;
  return `set search_path = "${schema.replace(/"/g, '""')}", pg_temp`;
}

export async function up(knex: Knex): Promise<void> {
  await knex.raw(recordProvisionalAccessSql(await searchPath(knex), { notify: false, renewal: true }));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(recordProvisionalAccessSql(await searchPath(knex), { notify: false }));
}
