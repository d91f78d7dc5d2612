/**
 * `npm run migrate`: bring the database at DATABASE_URL to the latest schema, then exit.
 * (`npm start` migrates on its own; this is for external databases and deploy steps.)
 */
import { createKnex } from './knex';
import { migrateLatest } from './migrate';

const url = process.env.DATABASE_URL;
if (!url) {
  console.error('DATABASE_URL is not set: npm run migrate migrates the database it names.');
  process.exit(2);
}
const db = createKnex(url, { min: 0, max: 1 });
try {
  await migrateLatest(db);
  console.log('migrated: the database is at the latest schema');
} catch (e) {
  console.error(`migrate failed: ${(e as Error).message}`);
  process.exitCode = 1;
} finally {
  await db.destroy();
}
