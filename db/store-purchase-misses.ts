import type { Knex } from 'knex';

/**
 * Purchase tokens a store answered 404 for (table `store_purchase_misses`), per
 * tenant, provider and token hash, until they expire. Owner connection: the /v1/sdk routes ask
 * before any tenant transaction, and the table holds hashes only.
 */

export async function isKnownMiss(db: Knex, tenantId: string, provider: string, tokenHash: string): Promise<boolean> {
  const { rows } = await db.raw(
    'select 1 from store_purchase_misses where tenant_id = ? and provider = ? and token_hash = ? and expires_at > now()',
    [tenantId, provider, tokenHash],
  );
  return rows.length > 0;
}

export async function rememberMiss(
  db: Knex,
  tenantId: string,
  provider: string,
  tokenHash: string,
  ttlSeconds: number,
): Promise<void> {
  await db.raw(
    `insert into store_purchase_misses (tenant_id, provider, token_hash, expires_at)
     values (?, ?, ?, now() + make_interval(secs => ?))
     on conflict (tenant_id, provider, token_hash) do update set expires_at = excluded.expires_at`,
    [tenantId, provider, tokenHash, ttlSeconds],
  );
}

export async function pruneExpiredMisses(db: Knex): Promise<void> {
  await db.raw('delete from store_purchase_misses where expires_at < now()');
}
