import knexFactory, { type Knex } from 'knex';
import pg from 'pg';

// Return bigint (int8) and numeric columns as JS numbers: our amounts are minor units well
// inside 2^53, and counts from count(*) are int8.
pg.types.setTypeParser(20, (v) => Number(v));
pg.types.setTypeParser(1700, (v) => Number(v));

export function createKnex(databaseUrl: string, pool: { min?: number; max?: number } = {}): Knex {
  return knexFactory({
    client: 'pg',
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
