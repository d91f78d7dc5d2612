import type { Knex } from 'knex';

/**
 * `sync_runs.workflow_id`: the id of the Temporal workflow that ran it, as it was started. Sync
 * workflow ids now carry the tenant (`sync-<tenant>-<run>`); runs started before that keep their
 * old ids, so the dashboard links each run by what it recorded, not by today's naming rule.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table sync_runs add column if not exists workflow_id text');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table sync_runs drop column if exists workflow_id');
}
