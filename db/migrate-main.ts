import { loadConfig } from '../runtime/config';
import { openDatabase } from './open-database';
import { appliedMigrations } from './migrate';

// `npm run migrate`: bring the database (DATABASE_URL, or the embedded one) to the latest schema as its owner,
// provision the login role the api and worker connect as (APP_DATABASE_URL's, else billing_api), say which, and stop.
const { db, close } = await openDatabase(loadConfig(), { pool: { max: 1 }, as: 'owner' });
try {
  process.stdout.write(`migrations applied: ${(await appliedMigrations(db)).join(', ')}\n`);
} finally {
  await close();
}
