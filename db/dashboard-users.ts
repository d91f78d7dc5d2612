import crypto from 'node:crypto';
import type { Knex } from 'knex';
import type { Role } from '../domain/roles';
import { createTenant } from './tenants';

/** Sessions last a working day; logging out deletes the row at once. */
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;

export interface DashboardUser {
  id: string;
  tenant_id: string;
  email: string;
  /** Read afresh with every request's session: a role change holds from the member's next request. */
  role: Role;
}

export interface SessionUser extends DashboardUser {
  session_id: string;
}

/** Only this hash of a session token is stored: a leaked table cannot be replayed as cookies. */
export function hashSessionToken(token: string): string {
  return crypto.createHash('sha256').update(token, 'utf8').digest('hex');
}

export class EmailTaken extends Error {
  constructor() {
    super('an account with this email already exists');
  }
}

/**
 * Sign-up in one transaction: the tenant (free tier, first app, test publishable key) and
 * its first user. createTenant also mints an all-scope secret key for the CLI path; a person
 * signing up never sees that value, so it is dropped here and they mint scoped keys under
 * Settings → Developer API instead.
 */
export async function signUpUser(db: Knex, input: { email: string; passwordHash: string }): Promise<DashboardUser> {
  try {
    return await db.transaction(async (trx) => {
      const tenant = await createTenant(trx, { name: input.email });
      await trx('api_keys').where({ tenant_id: tenant.tenant_id }).del();
      return insertUser(trx, { tenantId: tenant.tenant_id, ...input });
    });
  } catch (err) {
    if ((err as { code?: string }).code === '23505') throw new EmailTaken();
    throw err;
  }
}

/** A person of an existing tenant (the demo tenant's login); the same row sign-up writes. */
export async function addUserToTenant(
  db: Knex,
  input: { tenantId: string; email: string; passwordHash: string },
): Promise<DashboardUser> {
  try {
    return await insertUser(db, input);
  } catch (err) {
    if ((err as { code?: string }).code === '23505') throw new EmailTaken();
    throw err;
  }
}

/** A new password for a person, ending every session they had. */
export async function replacePassword(db: Knex, user: DashboardUser, passwordHash: string): Promise<void> {
  await db.transaction(async (trx) => {
    await trx('dashboard_users')
      .where({ id: user.id, tenant_id: user.tenant_id })
      .update({ password_hash: passwordHash });
    await trx('dashboard_sessions').where({ user_id: user.id, tenant_id: user.tenant_id }).del();
  });
}

async function insertUser(
  db: Knex,
  input: { tenantId: string; email: string; passwordHash: string },
): Promise<DashboardUser> {
  const [user] = await db('dashboard_users')
    .insert({ tenant_id: input.tenantId, email: input.email, password_hash: input.passwordHash })
    .returning(['id', 'tenant_id', 'email', 'role']);
  return user as DashboardUser;
}

/** Login looks a user up by email before any tenant is known: the system role, one row. A removed member has none. */
export async function findUserForLogin(
  db: Knex,
  email: string,
): Promise<(DashboardUser & { password_hash: string }) | undefined> {
  return db('dashboard_users')
    .where({ email })
    .whereNull('removed_at')
    .first('id', 'tenant_id', 'email', 'role', 'password_hash');
}

/**
 * A new session. `failed`: the wrong passwords the log-in found since the last one, kept with the
 * session for its overview (written in the tenant's transaction: the login role may not).
 */
export async function createSession(
  db: Knex,
  user: DashboardUser,
  failed?: { attempts: number; addresses: number },
): Promise<{ token: string; expiresAt: Date }> {
  const token = crypto.randomBytes(32).toString('base64url');
  const expiresAt = new Date(Date.now() + SESSION_TTL_MS);
  await db('dashboard_sessions').insert({
    tenant_id: user.tenant_id,
    user_id: user.id,
    token_hash: hashSessionToken(token),
    expires_at: expiresAt,
    ...(failed?.attempts ? { failed_sign_ins: failed.attempts, failed_sign_in_addresses: failed.addresses } : {}),
  });
  return { token, expiresAt };
}

export async function sessionUser(db: Knex, token: string): Promise<SessionUser | undefined> {
  const row = await db('dashboard_sessions as s')
    .join('dashboard_users as u', 'u.id', 's.user_id')
    .where('s.token_hash', hashSessionToken(token))
    .where('s.expires_at', '>', db.fn.now())
    .whereNull('u.removed_at')
    .first('u.id', 'u.tenant_id', 'u.email', 'u.role', 's.id as session_id');
  return row as SessionUser | undefined;
}

export async function deleteSession(db: Knex, token: string): Promise<void> {
  await db('dashboard_sessions')
    .where({ token_hash: hashSessionToken(token) })
    .del();
}
