import crypto from 'node:crypto';
import type { Knex } from 'knex';
import pg from 'pg';
import { APP_ROLE } from './tenant-tx';

/**
 * The role the api and worker log in as (docs/tenancy-and-rls.md, "Roles"): not a superuser,
 * no BYPASSRLS, CREATEDB or CREATEROLE, owns nothing, and inherits nothing. It may become
 * `billing_app` for a tenant transaction; everything else it may do is granted by name in
 * the schema.
 */
export const LOGIN_ROLE = 'billing_api';

/**
 * The login role's password when nobody chose one (no APP_DATABASE_URL): derived from the
 * owner's credentials and server (not the database: a role belongs to the whole cluster, so
 * every database of one server, e.g. each test run's, reaches the same one). Whoever can derive
 * it already holds the owner's rights.
 */
export function derivedPassword(ownerUrl: string): string {
  const u = new URL(ownerUrl);
  const server = `${u.protocol}//${u.username}:${u.password}@${u.host}`;
  return crypto.createHmac('sha256', server).update(`postgres role ${LOGIN_ROLE}`).digest('base64url');
}

/** The owner URL with the login role's user name and password instead. */
export function loginRoleUrl(ownerUrl: string, password = derivedPassword(ownerUrl)): string {
  const u = new URL(ownerUrl);
  u.username = LOGIN_ROLE;
  u.password = password;
  return u.toString();
}

/** The role name a postgres URL logs in as. */
export function urlUser(url: string): string {
  return decodeURIComponent(new URL(url).username);
}

/**
 * Make the login role able to log in, as the owner, after migrations: its attributes, its
 * password and its membership of `billing_app`. `appUrl` names the role the processes will use:
 * `billing_api` itself (its password is set from the URL), or an operator's own role, which is
 * then made a member of `billing_api` (its attributes and password are the operator's).
 *
 * Only what is wrong is changed: an attribute clause only when pg_roles shows another value (so
 * an owner with CREATEROLE but no superuser can run it once a superuser has set BYPASSRLS and
 * the like right), the password only when logging in with it fails. A steady start writes no
 * catalog row.
 *
 * Roles are cluster-wide while databases are per run, and advisory locks are per database, so
 * concurrent runs are not serialised here: each statement is idempotent, and the errors two
 * writers of the same catalog row can meet (duplicate, "tuple concurrently updated") are
 * retried.
 */
export async function provisionLoginRole(owner: Knex, appUrl: string): Promise<void> {
  const user = urlUser(appUrl);
  await retryCatalogRace(async () => {
    await owner.raw(`do $$ begin
        if not exists (select 1 from pg_roles where rolname = '${LOGIN_ROLE}') then create role ${LOGIN_ROLE} nologin noinherit; end if;
      end $$`);
    if (user === LOGIN_ROLE) {
      const { rows } = await owner.raw('select * from pg_roles where rolname = ?', [LOGIN_ROLE]);
      const wrong = Object.entries(WANTED)
        .filter(([column, [value]]) => rows[0][column] !== value)
        .map(([, [, sql]]) => sql);
      if (wrong.length) await owner.raw(`alter role ${LOGIN_ROLE} ${wrong.join(' ')}`);
      const password = decodeURIComponent(new URL(appUrl).password);
      if (password && !(await canLogIn(appUrl))) {
        // ALTER ROLE takes no parameters: format('%L') quotes the password as a literal.
        const { rows: sql } = await owner.raw(`select format('alter role %I password %L', ?::text, ?::text) as sql`, [
          LOGIN_ROLE,
          password,
        ]);
        await owner.raw(sql[0].sql);
      }
    }
    await grantIfMissing(owner, APP_ROLE, LOGIN_ROLE);
    if (user !== LOGIN_ROLE) await grantIfMissing(owner, LOGIN_ROLE, user);
  });
}

/** The login role's attributes: pg_roles column → [wanted value, the ALTER ROLE clause that sets it]. */
const WANTED: Record<string, [boolean, string]> = {
  rolcanlogin: [true, 'login'],
  rolinherit: [false, 'noinherit'],
  rolsuper: [false, 'nosuperuser'],
  rolbypassrls: [false, 'nobypassrls'],
  rolcreatedb: [false, 'nocreatedb'],
  rolcreaterole: [false, 'nocreaterole'],
  rolreplication: [false, 'noreplication'],
};

/** Whether `url` logs in as it stands (right password, or a server that asks for none). */
async function canLogIn(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function grantIfMissing(owner: Knex, role: string, member: string): Promise<void> {
  const { rows } = await owner.raw(`select pg_has_role(?, ?, 'member') as yes`, [member, role]);
  if (!rows[0].yes) await owner.raw(`grant ${quoteIdent(role)} to ${quoteIdent(member)}`);
}

const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** Catalog races between concurrent provisioners: duplicate_object, unique_violation, "tuple concurrently updated". */
const RACE_CODES = new Set(['42710', '23505', 'XX000']);

async function retryCatalogRace(work: () => Promise<void>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      const code = (err as { code?: string }).code;
      const race = code && RACE_CODES.has(code) && (code !== 'XX000' || /concurrently/.test((err as Error).message));
      if (!race || attempt >= 5) throw err;
      await new Promise((r) => setTimeout(r, 20 * attempt + Math.random() * 50));
    }
  }
}
