import type { Knex } from 'knex';
import type { PaywallConfig } from '../domain/paywall';

/** The tenant's paywall (one per tenant). Run inside withTenant. */
export async function getPaywallRow(trx: Knex.Transaction) {
  return trx('paywalls').first('id', 'config', 'published_config', 'published_at', 'updated_at');
}

/** Save the draft; what the SDK gets changes only on publish. */
export async function saveDraft(trx: Knex.Transaction, tenantId: string, config: PaywallConfig): Promise<void> {
  await trx('paywalls')
    .insert({ tenant_id: tenantId, config: JSON.stringify(config) })
    .onConflict('tenant_id')
    .merge({ config: JSON.stringify(config), updated_at: trx.fn.now() });
}

/** Publish the draft: GET /v1/paywall serves it from now on. */
export async function publishDraft(trx: Knex.Transaction): Promise<boolean> {
  const n = await trx('paywalls').update({ published_config: trx.ref('config'), published_at: trx.fn.now() });
  return n > 0;
}

/**
 * The tenant's paywall as the SDK may see it: only once published (null before). Run inside
 * withTenant. Beside db/paywalls.ts (the dashboard's draft and publish), kept apart because this
 * is the /v1/sdk read and the only one that filters on publication.
 */
export async function findPublishedPaywall(
  trx: Knex.Transaction,
): Promise<{ config: unknown; published_config: unknown; published_at: Date; updated_at: Date } | undefined> {
  return trx('paywalls').whereNotNull('published_at').first('config', 'published_config', 'published_at', 'updated_at');
}
