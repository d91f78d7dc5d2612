import type { Knex } from 'knex';

/**
 * The management bucket (`rate_limit_buckets`, one row per tenant) is updated on every request.
 * At the default fillfactor its pages fill up, about a quarter of the updates could not stay on
 * their page (no HOT update: a new index entry each, and the table and its index grow — 500
 * buckets took 800 KB after 20,000 requests); with half of each page kept free, measured the
 * same way, every update stayed on its page and the table stayed at 72 KB
 * (docs/request-gate.md). Pages written from now on keep the room; existing ones converge as
 * their rows are updated.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table rate_limit_buckets set (fillfactor = 50)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table rate_limit_buckets reset (fillfactor)');
}
