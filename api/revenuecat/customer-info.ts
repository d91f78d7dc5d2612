import type { Knex } from 'knex';
import { aliasedIds } from '../../db/revenuecat';
import { readAccessRows } from '../../db/subscriptions';
import { readAsTenant } from '../../db/tenant-read';
import { MAX_ALIASES } from '../../domain/aliases';
import { customerInfoBody, type AccessRow, type ProductFacts } from '../../domain/revenuecat';
import type { AppActor } from '../sdk/auth';

/**
 * RevenueCat's customer info for one app user: the rows GET /v1/sdk/subscribers/{id} reads
 * (db/subscriptions.ts readAccessRows: the key's side, grants, provisional access, each row with
 * its product's catalogue facts), for the id and the anonymous ids that logged in as it, shaped
 * by domain/revenuecat.ts with the same premium rule. One tenant read of two statements.
 */
export async function customerInfo(db: Knex, actor: AppActor, appUserId: string) {
  const now = Date.now();
  const { canonical, rows, seen } = await readAsTenant(db, actor.tenantId, async (reader) => {
    const { canonical, firstSeen } = await aliasedIds(reader, appUserId, MAX_ALIASES);
    // The access statement follows the same aliases itself (db/subscriptions.ts).
    return { canonical, rows: await readAccessRows(reader, appUserId, actor.mode), seen: firstSeen };
  });
  // Each row carries its product's catalogue facts (the same statement): the products RevenueCat's body names.
  const products = new Map<string, ProductFacts>();
  for (const r of rows)
    if (r.product_id)
      products.set(r.product_id as string, {
        sku: r.sku as string,
        entitlement: (r.entitlement as string | null) ?? null,
        android_store_product_id: (r.android_store_product_id as string | null) ?? null,
        ios_store_product_id: (r.ios_store_product_id as string | null) ?? null,
      });
  return customerInfoBody({
    appUserId,
    originalAppUserId: canonical,
    rows: (rows as unknown as AccessRow[]).map((r) => ({ ...r, created_at: new Date(r.created_at).toISOString() })),
    products,
    firstSeen: seen ? new Date(seen).toISOString() : null,
    now,
  });
}
