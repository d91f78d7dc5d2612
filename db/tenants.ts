import type { Knex } from 'knex';
import { generatePublishableKey, generateSecretKey, hashSecretKey, keyHint } from '../api/keys';
import { SCOPES, type Scope } from '../domain/scopes';

export interface CreatedTenant {
  tenant_id: string;
  secret_key: string;
  publishable_key: string;
  app_id: string;
}

/**
 * Sign-up: a tenant on the free tier with one app (and its initial test publishable key)
 * and an all-scope secret key. Runs as the system actor, in one transaction.
 */
export async function createTenant(db: Knex, input: { name: string; isDemo?: boolean }): Promise<CreatedTenant> {
  return db.transaction(async (trx) => {
    const [tenant] = await trx('tenants').insert({ name: input.name, is_demo: input.isDemo ?? false }).returning('*');
    const publishable = generatePublishableKey('test');
    const [app] = await trx('apps')
      .insert({
        tenant_id: tenant.id,
        name: 'Default app',
        publishable_key_test: publishable,
        publishable_key_live: generatePublishableKey('live'),
      })
      .returning('id');
    const key = await insertApiKey(trx, tenant.id, [...SCOPES], { name: 'initial' });
    return { tenant_id: tenant.id, secret_key: key.secret_key, publishable_key: publishable, app_id: app.id };
  });
}

export async function insertApiKey(
  db: Knex,
  tenantId: string,
  scopes: Scope[],
  opts: { name?: string; expiresInSeconds?: number } = {},
): Promise<{ key_id: string; secret_key: string }> {
  const secret = generateSecretKey();
  const [row] = await db('api_keys')
    .insert({
      tenant_id: tenantId,
      name: opts.name ?? '',
      key_hash: hashSecretKey(secret),
      key_hint: keyHint(secret),
      scopes,
      expires_at: opts.expiresInSeconds !== undefined ? new Date(Date.now() + opts.expiresInSeconds * 1000) : null,
    })
    .returning('id');
  return { key_id: row.id, secret_key: secret };
}

export async function revokeApiKey(db: Knex, keyId: string): Promise<boolean> {
  const n = await db('api_keys').where({ id: keyId }).whereNull('revoked_at').update({ revoked_at: db.fn.now() });
  if (n > 0) return true;
  const exists = await db('api_keys').where({ id: keyId }).first('id');
  if (!exists) throw new Error(`no key with id ${keyId}`);
  return false; // already revoked: idempotent
}
