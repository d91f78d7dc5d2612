import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { hashSessionToken } from './dashboard-users';

/**
 * A secret shown once after a redirect (post/redirect/get): parked on the session row between
 * the POST that creates it and the GET that shows it. AES-256-GCM under a key derived from the
 * session token, which only the browser's cookie holds (the row has its hash), so a copy of
 * the table does not reveal it.
 */
export interface PendingSecret {
  name: string;
  secret: string;
  /** What it is, for the page that shows it: a secret key (absent) or a public key for RevenueCat's SDKs. */
  kind?: 'revenuecat_key';
}

function keyFor(sessionToken: string): Buffer {
  return crypto.createHmac('sha256', sessionToken).update('dashboard-pending-secret').digest();
}

export async function parkSecret(db: Knex, sessionToken: string, value: PendingSecret): Promise<void> {
  const iv = crypto.randomBytes(12);
  const c = crypto.createCipheriv('aes-256-gcm', keyFor(sessionToken), iv);
  const body = Buffer.concat([c.update(JSON.stringify(value), 'utf8'), c.final()]);
  const sealed = Buffer.concat([iv, c.getAuthTag(), body]).toString('base64');
  await db('dashboard_sessions')
    .where({ token_hash: hashSessionToken(sessionToken) })
    .update({ pending_secret: sealed });
}

/**
 * Reads and clears in one statement (the row lock makes two concurrent reloads see it at most
 * once between them), so a reload or the back button never shows the secret again.
 */
export async function takeSecret(db: Knex, sessionToken: string): Promise<PendingSecret | undefined> {
  const { rows } = await db.raw(
    `with old as (select id, pending_secret from dashboard_sessions where token_hash = ? and pending_secret is not null for update)
     update dashboard_sessions s set pending_secret = null from old where s.id = old.id returning old.pending_secret`,
    [hashSessionToken(sessionToken)],
  );
  if (rows.length === 0) return undefined;
  const raw = Buffer.from(rows[0].pending_secret as string, 'base64');
  try {
    const d = crypto.createDecipheriv('aes-256-gcm', keyFor(sessionToken), raw.subarray(0, 12));
    d.setAuthTag(raw.subarray(12, 28));
    return JSON.parse(Buffer.concat([d.update(raw.subarray(28)), d.final()]).toString('utf8')) as PendingSecret;
  } catch {
    return undefined; // sealed under another token: never shown, already cleared
  }
}
