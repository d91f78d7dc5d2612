import type { Knex } from 'knex';

/**
 * Whether the server runs autovacuum. Without it the planner's statistics are never refreshed: a
 * table read as empty when it was first planned stays "empty" at any size, and a lookup by event id
 * turns into a scan of every delivery of the tenant (docs/operations.md, "Postgres").
 */
export async function autovacuumRuns(db: Knex): Promise<boolean> {
  const { rows } = await db.raw("select current_setting('autovacuum') = 'on' as on");
  return rows[0].on === true;
}
