import type { Knex } from 'knex';
import { MIGRATIONS } from './migrations/index';

const source: Knex.MigrationSource<string> = {
  getMigrations: async () => Object.keys(MIGRATIONS),
  getMigrationName: (name) => name,
  getMigration: async (name) => MIGRATIONS[name],
};

export async function migrateLatest(db: Knex): Promise<void> {
  // Concurrent starters (api + worker) serialise on knex's own migration lock.
  await db.migrate.latest({ migrationSource: source, disableMigrationsListValidation: true });
}

/** Names of the migrations the database has applied, oldest first. */
export async function appliedMigrations(db: Knex): Promise<string[]> {
  const [done] = (await db.migrate.list({ migrationSource: source, disableMigrationsListValidation: true })) as [
    Array<{ name: string } | string>,
    unknown[],
  ];
  return done.map((m) => (typeof m === 'string' ? m : m.name));
}
