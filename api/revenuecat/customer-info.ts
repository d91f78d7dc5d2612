import type { Knex } from 'knex';
import { aliasedIds, firstSeen, productFacts } from '../../db/revenuecat';
import { readSubscriberRows } from '../../db/subscriptions';
import { readAsTenant } from '../../db/tenant-read';
import { MAX_ALIASES } from '../../domain/aliases';
import { customerInfoBody, type AccessRow, type ProductFacts } from '../../domain/revenuecat';
import type { AppActor } from '../sdk/auth';

/**
 * RevenueCat's customer info for one app user: the rows GET /v1/sdk/subscribers/{id} reads
 * (db/subscriptions.ts readSubscriberRows: the key's side, grants, provisional access), for the
 * id and the anonymous ids that logged in as it, shaped by domain/revenuecat.ts with the same
 * premium rule. One tenant read.
 */
export async function customerInfo(db: Knex, actor: AppActor, appUserId: string) {
  const now = Date.now();
  const { canonical, rows, products, seen } = await readAsTenant(db, actor.tenantId, async (reader) => {
    const { canonical, ids } = await aliasedIds(reader, appUserId, MAX_ALIASES);
    // The read follows the same aliases itself (db/subscriptions.ts).
    const rows = (await readSubscriberRows(reader, appUserId, actor.mode)).ents as AccessRow[];
    const productIds = [...new Set(rows.map((r) => r.product_id).filter((id): id is string => !!id))];
    const products = new Map<string, ProductFacts>(
      (await productFacts(reader, productIds)).map((p) => [p.id as string, p as unknown as ProductFacts]),
    );
    return { canonical, rows, products, seen: await firstSeen(reader, ids) };
  });
  return customerInfoBody({
    appUserId,
    originalAppUserId: canonical,
    rows: rows.map((r) => ({ ...r, created_at: new Date(r.created_at).toISOString() })),
    products,
    firstSeen: seen ? new Date(seen).toISOString() : null,
    now,
  });
}
