import type { Knex } from 'knex';
import { createKnex, withDatabase } from './knex';
import { migrateLatest } from './migrate';
import { loginRoleUrl, provisionLoginRole } from './login-role';
import type { Config } from '../runtime/config';
import { ensurePostgres } from '../runtime/postgres';

export const EMBEDDED_DATABASE = 'billing';

export interface OpenDatabase {
  /** The login role's pool (`as: 'app'`, the default) or the owner's (`as: 'owner'`). */
  db: Knex;
  /** The URL `db` connects with. */
  url: string;
  /** The login role's URL: what the api and worker connect with (scripts/start.ts hands it to them). */
  appUrl: string;
  close: () => Promise<void>;
}

type DatabaseConfig = Pick<Config, 'databaseUrl' | 'appDatabaseUrl' | 'dataDir'>;

/**
 * The service database (docs/tenancy-and-rls.md, "Roles").
 *
 * - `DATABASE_URL` (or the `billing` database of the embedded server, created on first use) is
 *   the owner: as the owner the schema is migrated and the login role provisioned
 *   (db/login-role.ts), then — for the api and the worker (`as: 'app'`) — the owner connection is
 *   closed and the pool connects as the login role: `APP_DATABASE_URL` when set, else
 *   `billing_api` with a password derived from the owner URL.
 * - `APP_DATABASE_URL` alone (docker-compose's api and worker): connect as it and nothing else;
 *   migrations are someone else's step (`npm run migrate` with DATABASE_URL).
 * - `as: 'owner'` (migrations, `npm start`'s demo seed, the admin CLI) keeps the owner pool.
 */
export async function openDatabase(
  config: DatabaseConfig,
  opts: {
    pool?: { min?: number; max?: number };
    migrate?: boolean;
    log?: (m: string) => void;
    as?: 'app' | 'owner';
  } = {},
): Promise<OpenDatabase> {
  const as = opts.as ?? 'app';
  if (!config.databaseUrl && config.appDatabaseUrl) {
    if (as === 'owner')
      throw new Error('APP_DATABASE_URL is the login role: migrations and the admin CLI need DATABASE_URL, the owner');
    return openAsLoginRole(config.appDatabaseUrl, opts.pool, async () => {});
  }
  const pg = await ensurePostgres(config, { log: opts.log });
  let ownerUrl = pg.url;
  if (pg.embedded) {
    const admin = createKnex(pg.url, { max: 1 });
    try {
      const exists = await admin('pg_database').where({ datname: EMBEDDED_DATABASE }).first('datname');
      if (!exists)
        await admin.raw(`create database ${EMBEDDED_DATABASE}`).catch((e) => {
          if (!/already exists/.test(String(e.message))) throw e;
        });
    } finally {
      await admin.destroy();
    }
    ownerUrl = withDatabase(pg.url, EMBEDDED_DATABASE);
  }
  const appUrl = config.appDatabaseUrl ?? loginRoleUrl(ownerUrl);
  const owner = createKnex(ownerUrl, as === 'owner' ? opts.pool : { max: 1 });
  try {
    if (opts.migrate !== false) await migrateLatest(owner);
    await provisionLoginRole(owner, appUrl);
  } catch (err) {
    await owner.destroy();
    await pg.stop();
    throw err;
  }
  if (as === 'owner') {
    return {
      db: owner,
      url: ownerUrl,
      appUrl,
      close: async () => {
        await owner.destroy();
        await pg.stop();
      },
    };
  }
  await owner.destroy();
  return openAsLoginRole(appUrl, opts.pool, () => pg.stop());
}

async function openAsLoginRole(
  url: string,
  pool: { min?: number; max?: number } | undefined,
  stop: () => Promise<void>,
): Promise<OpenDatabase> {
  const db = createKnex(url, pool);
  try {
    await assertNotPrivileged(db);
  } catch (err) {
    await db.destroy();
    await stop();
    throw err;
  }
  return {
    db,
    url,
    appUrl: url,
    close: async () => {
      await db.destroy();
      await stop();
    },
  };
}

/**
 * The api and worker refuse to serve as a role that RLS cannot hold: a superuser, BYPASSRLS,
 * or the owner of a table (an owner is exempt unless FORCE, and can turn FORCE off).
 */
export async function assertNotPrivileged(db: Knex): Promise<void> {
  const { rows } = await db.raw(`select current_user as role, r.rolsuper or r.rolbypassrls as privileged,
      exists (select 1 from pg_tables t where t.schemaname = current_schema() and t.tableowner = current_user) as owns
    from pg_roles r where r.rolname = current_user`);
  const me = rows[0] as { role: string; privileged: boolean; owns: boolean };
  if (me.privileged || me.owns) {
    throw new Error(
      `the app database role "${me.role}" is ${me.privileged ? 'a superuser or BYPASSRLS' : 'a table owner'}: row-level security cannot hold it (set APP_DATABASE_URL to a login role, docs/tenancy-and-rls.md)`,
    );
  }
}
