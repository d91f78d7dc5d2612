import type { Knex } from 'knex';
import { recordProvisionalAccessSql } from './045_provisional_access';

/**
 * The receipt's provisional grant no longer notifies inside the receiver's writing statement.
 * A NOTIFY in a writing transaction holds Postgres's one notify lock (server-wide) from its
 * pre-commit through the commit's WAL flush, so every granting receipt committed one after
 * another: under load 81–84 % of the receiving backends waited on that lock (bench/RESULTS.md,
 * "Sustained webhook ingest"). The receiver now wakes the app user's waiters with a statement of
 * its own after the commit (db/entitlement-notify.ts `notifyAfterCommit`), which writes no WAL.
 */
async function searchPath(knex: Knex): Promise<string> {
  const schema = (await knex.raw('select current_schema() as s')).rows[0].s as string;
  return `set search_path = "${schema.replace(/"/g, '""')}", pg_temp`;
}

export async function up(knex: Knex): Promise<void> {
  await knex.raw(recordProvisionalAccessSql(await searchPath(knex), { notify: false }));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(recordProvisionalAccessSql(await searchPath(knex), { notify: true }));
}
