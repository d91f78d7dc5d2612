import type { Knex } from 'knex';
import { findPublishedPaywall } from '../../db/paywalls';
import { withTenant } from '../../db/tenant-tx';
import { notFound } from '../../operations/errors';
import type { AppActor as SdkActor } from './auth';

/** GET /v1/sdk/paywall → the tenant's *published* paywall configuration; 404 while unpublished. */
export async function publishedPaywall(db: Knex, who: SdkActor) {
  const row = await withTenant(db, who.tenantId, (trx) => findPublishedPaywall(trx));
  if (!row) throw notFound('published paywall');
  return {
    object: 'paywall' as const,
    config: row.published_config ?? row.config,
    published_at: new Date(row.published_at).toISOString(),
  };
}
