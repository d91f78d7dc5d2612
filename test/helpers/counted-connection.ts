import { afterAll, beforeAll, inject } from 'vitest';
import type { Knex } from 'knex';
import { createKnex } from '../../db/knex';

/**
 * One connection as the app's login role whose every statement is logged in `sent`, for tests that
 * count what a write sends to Postgres (round trips). Opened before the file's tests, closed after.
 */
export function countedConnection(): { db: () => Knex; sent: string[] } {
  let db: Knex | undefined;
  const sent: string[] = [];
  beforeAll(() => {
    db = createKnex(inject('appDatabaseUrl'), { max: 1 });
    db.on('query', (q: { sql: string }) => sent.push(q.sql));
  });
  afterAll(() => db?.destroy());
  return { db: () => db!, sent };
}
