import type { Knex } from 'knex';

/**
 * One drain at a time per tenant, across every API process: a running sync run is a row, and
 * a second one for the same tenant is a unique violation (→ 409 sync_in_progress). The row is
 * closed by the run's workflow, which Temporal carries to its end whatever dies meanwhile.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`create unique index sync_runs_one_running on sync_runs (tenant_id) where status = 'running'`);
  await knex.raw(
    `alter table sync_runs add constraint sync_runs_status_check check (status in ('running','succeeded','failed'))`,
  );
  await knex.raw(`alter table sync_runs add constraint sync_runs_kind_check check (kind in ('sync','product-sync'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists sync_runs_one_running');
  await knex.raw('alter table sync_runs drop constraint if exists sync_runs_status_check');
  await knex.raw('alter table sync_runs drop constraint if exists sync_runs_kind_check');
}
