import { loadConfig } from '../runtime/config';
import { openDatabase } from '../runtime/database';
import { appliedMigrations } from './migrate';

// `npm run migrate`: bring the database (DATABASE_URL, or the embedded one) to the latest schema, say which, and stop.
const { db, close } = await openDatabase(loadConfig(), { pool: { max: 1 } });
try {
  process.stdout.write(`migrations applied: ${(await appliedMigrations(db)).join(', ')}\n`);
} finally {
  await close();
}
