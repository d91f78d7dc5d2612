import type { Knex } from 'knex';
import * as baseline from './migrations/001_baseline';
import * as importLimits from './migrations/052_import_limits';
import * as apiKeyMinter from './migrations/053_api_key_minter';
import * as signInFailures from './migrations/054_sign_in_failures';
import * as signingKeys from './migrations/058_signing_keys';
import * as eventProofs from './migrations/060_event_proofs';

/** Migrations are listed here (not discovered on disk) so they load the same under tsx, vitest and bundlers. */
const MIGRATIONS: Record<string, Knex.Migration> = {
  '001_baseline': baseline,
  '052_import_limits': importLimits,
  '053_api_key_minter': apiKeyMinter,
  '054_sign_in_failures': signInFailures,
  '058_signing_keys': signingKeys,
  '060_event_proofs': eventProofs,
};

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
