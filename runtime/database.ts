import type { Knex } from 'knex';
import { createKnex, withDatabase } from '../db/knex';
import { migrateLatest } from '../db/migrate';
import type { Config } from './config';
import { ensurePostgres } from './postgres';

export const EMBEDDED_DATABASE = 'billing';

export interface OpenDatabase {
  db: Knex;
  url: string;
  close: () => Promise<void>;
}

/**
 * The service database, migrated: `DATABASE_URL` as given, or the `billing` database of the
 * embedded server (created on first use).
 */
export async function openDatabase(
  config: Pick<Config, 'databaseUrl' | 'dataDir'>,
  opts: { pool?: { min?: number; max?: number }; migrate?: boolean; log?: (m: string) => void } = {},
): Promise<OpenDatabase> {
  const pg = await ensurePostgres(config, { log: opts.log });
  let url = pg.url;
  if (pg.embedded) {
    const admin = createKnex(pg.url, { max: 1 });
    try {
      const exists = await admin('pg_database').where({ datname: EMBEDDED_DATABASE }).first('datname');
      if (!exists) await admin.raw(`create database ${EMBEDDED_DATABASE}`).catch((e) => {
        if (!/already exists/.test(String(e.message))) throw e;
      });
    } finally {
      await admin.destroy();
    }
    url = withDatabase(pg.url, EMBEDDED_DATABASE);
  }
  const db = createKnex(url, opts.pool);
  if (opts.migrate !== false) await migrateLatest(db);
  return {
    db,
    url,
    close: async () => {
      await db.destroy();
      await pg.stop();
    },
  };
}
