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
    return (this as any).query(conn, `BEGIN; ${this.beginSql}`);
  }
}

class BillingPgClient extends PgClient {
  transaction(container: unknown, config?: { beginSql?: string }, outerTx?: unknown) {
    return new BillingTransaction(this, container, config, outerTx);
  }
}

/** Transaction options understood by our client, on top of knex's own. */
export type TenantTransactionConfig = Knex.TransactionConfig & { beginSql?: string };

export function createKnex(databaseUrl: string, pool: { min?: number; max?: number } = {}): Knex {
  return knexFactory({
    client: BillingPgClient as unknown as typeof Knex.Client,
    connection: databaseUrl,
    pool: { min: pool.min ?? 0, max: pool.max ?? 10 },
    migrations: { tableName: 'knex_migrations' },
  });
}

/** Swap the database name of a postgres URL (used to create per-run databases). */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}
