import type { Knex } from 'knex';
import { PROVIDERS, type ProviderId } from '../domain/providers';
import type { ReadinessFacts } from '../domain/readiness';
import { syncedCounts } from '../domain/product-sync';
import { speakingConnection } from '../domain/connection-choice';
import { listConnectionsSafe, type SafeConnection } from './connections';

/**
 * The facts readiness is judged on, read in the caller's tenant transaction (RLS scopes every
 * query). One row per provider configured on the tenant, judged on its speaking connection.
 */
export async function readReadinessFacts(trx: Knex.Transaction): Promise<ReadinessFacts[]> {
  // One after another: a transaction is one connection, and pg queues (and will refuse) overlapping queries on it.
  const connections = await listConnectionsSafe(trx);
  const productsRow = await trx('products').where({ active: true }).count<{ n: string }[]>({ n: '*' }).first();
  // The rows, not a SQL count: "synced" is judged by domain/product-sync.ts, the one rule drift and the product answers
  // use too.
  const refs = await trx('product_provider_refs as r')
    .join('products as p', 'p.id', 'r.product_id')
    .where('p.active', true)
    .select('r.product_id', 'p.version', 'r.provider', 'r.mode', 'r.synced_version');
  const sandbox = await trx('entitlements').where({ is_sandbox: true }).distinct('provider');
  const byProvider = new Map<ProviderId, SafeConnection[]>();
  for (const c of connections) byProvider.set(c.provider, [...(byProvider.get(c.provider) ?? []), c]);
  const synced = syncedCounts(refs);
  const syncedCount = (p: string, m: string) => synced.get(`${p}:${m}`) ?? 0;
  const evidence = new Set(sandbox.map((r: { provider: string }) => r.provider));
  return PROVIDERS.filter((p) => byProvider.has(p)).map((provider) => {
    const c = speakingConnection(byProvider.get(provider)!)!;
    return {
      provider,
      is_active: c.is_active,
      has_test_credential: c.has_test_credential,
      has_live_credential: c.has_live_credential,
      has_webhook_secret: c.has_webhook_secret,
      products: Number(productsRow?.n ?? 0),
      synced_test: syncedCount(provider, 'test'),
      synced_live: syncedCount(provider, 'live'),
      sandbox_evidence: evidence.has(provider),
    };
  });
}
