import type { Knex } from 'knex';

/** The cheapest statement that proves Postgres answers on this pool (/readyz). */
export async function pingDatabase(db: Knex): Promise<void> {
  await db.raw('select 1');
}
