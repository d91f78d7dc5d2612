import type { Knex } from 'knex';
import { SCOPES } from '../domain/scopes';
import { insertApiKey } from './api-keys';
import { generatePublishableKey } from './key-material';

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
    const [tenant] = await trx('tenants')
      .insert({ name: input.name, is_demo: input.isDemo ?? false })
      .returning('*');
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

/** Operator tooling (owner connection): does the tenant exist? */
export async function tenantExists(db: Knex, tenantId: string): Promise<boolean> {
  return !!(await db('tenants').where({ id: tenantId }).first('id'));
}

/** Operator tooling (owner connection): the tenant an API key belongs to. */
export async function tenantOfApiKey(db: Knex, keyId: string): Promise<string | null> {
  return (await db('api_keys').where({ id: keyId }).first('tenant_id'))?.tenant_id ?? null;
}

/** The calling tenant's own row (RLS shows it only its own), as GET /v1/tenant reports it. */
export async function tenantProfile(
  trx: Knex.Transaction,
): Promise<{ id: string; name: string; plan: string; subscriber_limit: number; created_at: Date }> {
  return trx('tenants').first('id', 'name', 'plan', 'subscriber_limit', 'created_at');
}
