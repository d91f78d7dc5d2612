import type { Knex } from 'knex';

/**
 * Every active, proven Play connection of every tenant: where the Voided Purchases API sweep
 * runs. Read as the login role before any tenant is known, through the same columns and policy
 * the webhook routing uses (migrations 015, 017): ids only, never a credential.
 */
export async function playConnectionsOfAllTenants(db: Knex): Promise<{ tenantId: string; connectionId: string }[]> {
  const rows = (await db('provider_connections')
    .where({ provider: 'store_android', is_active: true })
    .whereNotNull('verified_at')
    .orderBy('id')
    .select('id', 'tenant_id')) as { id: string; tenant_id: string }[];
  return rows.map((r) => ({ tenantId: r.tenant_id, connectionId: r.id }));
}
