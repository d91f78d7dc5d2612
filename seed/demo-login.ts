import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Knex } from 'knex';
import type { Config } from '../runtime/config';
import { hashPassword, passwordMatches } from '../runtime/passwords';
import { addUserToTenant, EmailTaken, findUserForLogin, replacePassword } from '../db/dashboard-users';
import { recordOperatorAudit } from '../db/audit';
import { withTenant } from '../db/tenant-tx';

export interface DemoLogin {
  email: string;
  password: string;
}

const FILE = 'demo-login.json';

/**
 * A dashboard login for the demo tenant, so a newcomer sees the demo's figures instead of
 * signing up into an empty account. The password is generated once and kept in a local,
 * owner-only file under the data dir (as the demo key is); never a fixed value, and never in
 * production, where no login is made at all. The person is the same row sign-up writes.
 */
export async function ensureDemoLogin(db: Knex, config: Config, tenantId: string): Promise<DemoLogin | undefined> {
  if (config.env === 'production') return undefined;
  const login = readOrCreateLoginFile(path.join(config.dataDir, FILE), tenantId);
  const existing = await withTenant(db, tenantId, (trx) => findUserForLogin(trx, login.email));
  if (existing && (await passwordMatches(existing.password_hash, login.password))) return login;
  const passwordHash = await hashPassword(login.password);
  if (existing) {
    // The file was removed (a new password was generated): the login follows the file.
    await withTenant(db, tenantId, (trx) => replacePassword(trx, existing, passwordHash));
  } else {
    try {
      await withTenant(db, tenantId, (trx) => addUserToTenant(trx, { tenantId, email: login.email, passwordHash }));
    } catch (err) {
      if (!(err instanceof EmailTaken)) throw err;
      // Another start made it at the same moment, from the same file.
      return login;
    }
  }
  await recordOperatorAudit(db, { tenantId, action: 'account.demo_login', detail: { email: login.email } });
  return login;
}

function readOrCreateLoginFile(file: string, tenantId: string): DemoLogin {
  // Named after the tenant, so a data dir reused with another database never lands on someone else's email.
  const email = `demo-${tenantId.slice(0, 8)}@example.com`;
  const saved = readLoginFile(file);
  if (saved?.email === email) return saved;
  const fresh: DemoLogin = { email, password: crypto.randomBytes(18).toString('base64url') };
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  fs.writeFileSync(file, JSON.stringify(fresh) + '\n', { mode: 0o600 });
  return fresh;
}

function readLoginFile(file: string): DemoLogin | undefined {
  try {
    const v = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<DemoLogin>;
    return typeof v.email === 'string' && typeof v.password === 'string' && v.password.length >= 12
      ? { email: v.email, password: v.password }
      : undefined;
  } catch {
    return undefined;
  }
}
