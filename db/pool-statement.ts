import type { Knex } from 'knex';
import type pg from 'pg';
import { preparedName, preparesStatements, renamePreparedAfterPlanChange } from './knex';
import type { Row } from './row';

/** A connection of knex's pool: a node-postgres client, which knex marks when it must be discarded. */
interface PoolConnection extends pg.Client {
  __knex__disposed?: unknown;
}

interface PoolClient {
  acquireConnection(): Promise<PoolConnection>;
  releaseConnection(c: PoolConnection): Promise<void>;
}

/** knex's pool, to take a connection from and give it back (the same pool every knex query uses). */
export const poolOf = (db: Knex): PoolClient => db.client as PoolClient;

/**
 * One statement (`$1`… placeholders) on a connection the caller holds, prepared by its text
 * where this knex prepares statements (db/knex.ts), as knex itself would name it.
 */
export async function runStatement(
  conn: PoolConnection,
  prepare: boolean,
  sql: string,
  values: unknown[],
  opts?: { types?: pg.CustomTypesConfig },
): Promise<Row[]> {
  const name = prepare ? preparedName(sql) : undefined;
  try {
    return (
      await conn.query({
        text: sql,
        values,
        ...(name ? { name } : {}),
        ...(opts?.types ? { types: opts.types } : {}),
      })
    ).rows;
  } catch (err) {
    if (name) renamePreparedAfterPlanChange(err);
    throw err;
  }
}

/**
 * One statement on a pool connection, outside any transaction, without knex's query runner:
 * for the statement every management request runs before its operation (the gate's key and
 * token), where the runner's per-query work (its query object, bindings rewrite, events and
 * response processing) cost more node CPU than the statement's own row (bench/RESULTS.md).
 * The connection goes back to the pool whatever happens; one that broke is marked by knex's
 * own error handler and discarded by the pool.
 */
export async function poolStatement(db: Knex, sql: string, values: unknown[]): Promise<Row[]> {
  const pool = poolOf(db);
  const conn = await pool.acquireConnection();
  try {
    return await runStatement(conn, preparesStatements(db), sql, values);
  } finally {
    await pool.releaseConnection(conn);
  }
}
