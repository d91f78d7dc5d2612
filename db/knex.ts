import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';

// Return bigint (int8) and numeric columns as JS numbers: our amounts are minor units well
// inside 2^53, and counts from count(*) are int8.
pg.types.setTypeParser(20, (v) => Number(v));
pg.types.setTypeParser(1700, (v) => Number(v));

const require = createRequire(import.meta.url);
const PgClient = require('knex/lib/dialects/postgres/index.js');
const PgTransaction = require('knex/lib/dialects/postgres/execution/pg-transaction.js');

/**
 * A transaction config may carry `beginSql`: statements sent in the same message as BEGIN,
 * so a tenant transaction costs no extra round trip to set its role and tenant.
 */
class BillingTransaction extends PgTransaction {
  private readonly beginSql?: string;
  constructor(client: unknown, container: unknown, config?: { beginSql?: string }, outerTx?: unknown) {
    super(client, container, config, outerTx);
    this.beginSql = config?.beginSql;
  }
  begin(conn: unknown) {
    if (!this.beginSql) return super.begin(conn);
    // knex's Transaction#query is internal (not in its types): the same call its own begin() makes.
    return (this as unknown as { query(conn: unknown, sql: string): Promise<unknown> }).query(
      conn,
      `BEGIN; ${this.beginSql}`,
    );
  }
}

/**
 * Statements marked `.options({ prepare: true })` run as named prepared statements: each pool
 * connection parses and plans them once, later calls send only the parameters. For the hot
 * path's short queries Postgres spends more time planning than executing (the entitlements page's
 * measured split is in bench/RESULTS.md). The name is derived from the SQL text, so every
 * distinct text (a page with other filters) is its own statement; only fixed-shape statements
 * opt in, so a connection holds a bounded handful of them.
 */
const preparedNames = new Map<string, string>();
const MAX_PREPARED = 500;
let preparedGeneration = 0;

export function preparedName(sql: string): string | undefined {
  let name = preparedNames.get(sql);
  if (name === undefined && preparedNames.size < MAX_PREPARED) {
    name = `p${preparedGeneration}_${createHash('sha1').update(sql).digest('hex').slice(0, 24)}`;
    preparedNames.set(sql, name);
  }
  return name;
}

/**
 * A migration that changes a table under a `select t.*` statement makes its cached plan
 * unusable on every connection that prepared it: new names make each connection prepare the
 * statement afresh (the query that hit it still fails; the next one runs).
 */
export function renamePreparedAfterPlanChange(err: unknown): void {
  const e = err as { code?: string; message?: string } | undefined;
  if (e?.code === '0A000' && /cached plan must not change result type/.test(e.message ?? '')) {
    preparedGeneration++;
    preparedNames.clear();
  }
}

/** Whether statements may run prepared on this knex (`createKnex(…, { prepareStatements: false })` turns it off). */
export const preparesStatements = (db: Knex) =>
  (db.client.config as { prepareStatements?: boolean }).prepareStatements !== false;

interface QueryObject {
  sql: string;
  options?: Record<string, unknown>;
}

class BillingPgClient extends PgClient {
  declare config: { prepareStatements?: boolean };
  _query(connection: unknown, obj: QueryObject) {
    const prepared = obj.options?.prepare === true && this.config.prepareStatements !== false;
    if (obj.options && 'prepare' in obj.options) {
      const { prepare: _omit, ...rest } = obj.options;
      obj.options = rest;
      if (prepared) {
        const name = preparedName(obj.sql);
        if (name) obj.options.name = name;
      }
    }
    return (super._query(connection, obj) as Promise<unknown>).catch((err: unknown) => {
      if (obj.options?.name) renamePreparedAfterPlanChange(err);
      throw err;
    });
  }

  transaction(container: unknown, config?: { beginSql?: string }, outerTx?: unknown) {
    return new BillingTransaction(this, container, config, outerTx);
  }
}

/** Transaction options understood by our client, on top of knex's own. */
export type TenantTransactionConfig = Knex.TransactionConfig & { beginSql?: string };

/** `prepareStatements: false` runs every statement unnamed (the bench's comparison). */
export function createKnex(
  databaseUrl: string,
  pool: { min?: number; max?: number } = {},
  opts: { prepareStatements?: boolean } = {},
): Knex {
  const config: Knex.Config & { prepareStatements: boolean } = {
    prepareStatements: opts.prepareStatements ?? true,
    client: BillingPgClient as unknown as typeof Knex.Client,
    connection: databaseUrl,
    pool: { min: pool.min ?? 0, max: pool.max ?? 10 },
    migrations: { tableName: 'knex_migrations' },
  };
  return knexFactory(config);
}

/** Swap the database name of a postgres URL (used to create per-run databases). */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}
