import type { Knex } from 'knex';
import type pg from 'pg';
import { preparesStatements } from './knex';
import { poolOf, runStatement } from './pool-statement';
import { tenantSettingsSql } from './tenant-tx';
import type { Row } from './row';

/** What a tenant read may do: run statements (`$1`… placeholders), each prepared by its text. */
export interface TenantReader {
  rows(sql: string, values: unknown[], opts?: { types?: pg.CustomTypesConfig }): Promise<Row[]>;
}

/**
 * A statement on a deployment table (no tenant's, read as the login role), constant text with no
 * parameters: `readAsTenant` may send it with its BEGIN, so it costs no round trip of its own.
 */
export interface DeploymentStatement {
  readonly sql: string;
}

/**
 * `withTenant` for a read of plain statements, without knex's transaction object: the same
 * role and tenant setting for the transaction's duration (so RLS filters every row), and READ
 * ONLY, so it cannot write. knex builds a whole knex instance per transaction (~150 closures);
 * on the hottest page that cost as much node CPU per request as the page's rows (bench/RESULTS.md).
 *
 * `first`: a deployment statement read in the same transaction before the tenant's settings (the
 * entitlement token's signer, read with the premium check's state), its rows handed to `work`.
 *
 * The reader refuses to run once the unit of work has ended, so a reference kept by mistake
 * cannot reach the connection after it went back to the pool (and into another tenant's
 * transaction). A connection whose COMMIT or ROLLBACK failed is marked for the pool to discard,
 * never handed out again in an unknown state.
 */
export async function readAsTenant<T>(
  db: Knex,
  tenantId: string,
  work: (reader: TenantReader, first: Row[]) => Promise<T>,
  opts: { first?: DeploymentStatement } = {},
): Promise<T> {
  const settings = tenantSettingsSql(tenantId, 'readAsTenant');
  const client = poolOf(db);
  const conn = await client.acquireConnection();
  const prepare = preparesStatements(db);
  let open = true;
  const reader: TenantReader = {
    async rows(sql, values, opts) {
      if (!open) throw new Error('readAsTenant: the read has ended; its reader cannot be used any more');
      return runStatement(conn, prepare, sql, values, opts);
    },
  };
  try {
    try {
      // A deployment statement rides in the same message, before the tenant's role is taken.
      const begun = await conn.query(`BEGIN READ ONLY; ${opts.first ? `${opts.first.sql}; ` : ''}${settings}`);
      const first = opts.first ? (begun as unknown as pg.QueryResult[])[1].rows : [];
      const result = await work(reader, first);
      open = false;
      await conn.query('COMMIT');
      return result;
    } catch (err) {
      open = false;
      // Whatever failed (BEGIN, the work, COMMIT), end the transaction before the connection goes
      // back; if even ROLLBACK fails, its state is unknown and the pool must discard it.
      await conn.query('ROLLBACK').catch((e: unknown) => (conn.__knex__disposed = e));
      throw err;
    }
  } finally {
    open = false;
    await client.releaseConnection(conn);
  }
}
