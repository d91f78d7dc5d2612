import type { Knex } from 'knex';
import { LOGIN_ROLE } from '../login-role';
import { tenantTablePolicies } from './tenant-policies';

/**
 * Scheduled exports to S3-compatible storage (docs/exports.md, "Scheduled exports to your bucket").
 *
 * - `export_destinations`: one per tenant, set on the dashboard only. The access key id and the
 *   secret are one vault envelope (`credentials_sealed`), bound to the row; `status` is `active`
 *   or `stopped` (a run failed `max attempts` times: nothing more runs until a person saves the
 *   form again), `failures` the failed runs in a row, `last_error` our own words.
 * - `export_destination_runs`: each run's window `[window_start, window_end)` (whole UTC days, fixed
 *   when the run is made, so a retried run reads the same rows and writes the same object keys),
 *   its status and what it wrote.
 * - `export_watermarks`: per table, the instant up to which its rows are in the bucket; moved only
 *   after that table's object is uploaded (the events' after the manifest agreed with the digests).
 * - `export_destinations_due(after, max)`: the daily Schedule's list, a page at a time, past RLS,
 *   tenant ids only.
 */
const TABLES = ['export_destinations', 'export_destination_runs', 'export_watermarks'] as const;

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('export_destinations', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('tenant_id').notNullable().unique().references('tenants.id').onDelete('CASCADE');
    t.text('endpoint').notNullable();
    t.text('region').notNullable();
    t.text('bucket').notNullable();
    t.text('prefix').notNullable().defaultTo('');
    t.text('format').notNullable().defaultTo('parquet');
    t.text('credentials_sealed').notNullable();
    t.text('status').notNullable().defaultTo('active');
    t.integer('failures').notNullable().defaultTo(0);
    t.text('last_error');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(`alter table export_destinations add constraint export_destinations_status
    check (status in ('active', 'stopped'))`);
  await knex.raw(`alter table export_destinations add constraint export_destinations_format
    check (format in ('parquet', 'csv'))`);
  await tenantTablePolicies(knex, 'export_destinations');

  await knex.schema.createTable('export_destination_runs', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.integer('seq').notNullable();
    t.timestamp('window_start', { useTz: true });
    t.timestamp('window_end', { useTz: true }).notNullable();
    t.text('status').notNullable().defaultTo('running');
    t.jsonb('files').notNullable().defaultTo('[]');
    t.jsonb('manifest');
    t.text('error');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('finished_at', { useTz: true });
    t.unique(['tenant_id', 'seq']);
  });
  await knex.raw(`alter table export_destination_runs add constraint export_destination_runs_status
    check (status in ('running', 'succeeded', 'failed'))`);
  // One run open per tenant: a tick while one is open resumes it rather than making another.
  await knex.raw(`create unique index export_destination_runs_one_open on export_destination_runs (tenant_id)
    where status = 'running'`);
  await tenantTablePolicies(knex, 'export_destination_runs');

  await knex.schema.createTable('export_watermarks', (t) => {
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.text('table_name').notNullable();
    t.timestamp('watermark', { useTz: true }).notNullable();
    t.primary(['tenant_id', 'table_name']);
  });
  await tenantTablePolicies(knex, 'export_watermarks');

  await knex.raw(`create function public.export_destinations_due(p_after uuid, p_max integer) returns setof uuid
      language sql stable security definer
      set search_path to 'public', 'pg_temp'
      as $$
        select d.tenant_id from export_destinations d where d.status = 'active' and (p_after is null or d.tenant_id > p_after) order by d.tenant_id limit p_max
      $$`);
  await knex.raw(`revoke all on function public.export_destinations_due(uuid, integer) from public`);
  await knex.raw(`do $$ begin
      if exists (select 1 from pg_roles where rolname = '${LOGIN_ROLE}') then
        execute 'grant execute on function public.export_destinations_due(uuid, integer) to ${LOGIN_ROLE}';
      end if; end $$`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop function export_destinations_due(uuid, integer)');
  for (const table of [...TABLES].reverse()) await knex.schema.dropTable(table);
}
