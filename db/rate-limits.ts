import type { Knex } from 'knex';

/**
 * The management rate limit's buckets (table `rate_limit_buckets`): one per tenant, shared by
 * every replica and every surface (both REST hosts, the tool server), drawn from by secret keys.
 * The capacity and refill are spelt into the statements, so they are stated here; the api's
 * headers and errors (api/rate-limit.ts) read them from here.
 */
export const BUCKET_CAPACITY = 120;
export const REFILL_PER_SECOND = 1;

// The bucket's level now: what it held plus the refill since, capped at capacity.
const LEVEL = `least(${BUCKET_CAPACITY}::float8, b.tokens + extract(epoch from (clock_timestamp() - b.refreshed_at)) * ${REFILL_PER_SECOND})`;

/**
 * `insert … select tenant_id from <source>` taking one token: refill by elapsed time, take a
 * token if there is one. ON CONFLICT DO UPDATE works on the latest, locked row version, so
 * concurrent requests from any replica serialise on the bucket and never spend the same token
 * twice. No row returned = bucket empty. A fragment, so the gate's key lookup
 * (db/api-keys.ts) can take the token in the same statement.
 */
export function takeTokenSql(source: string): string {
  return `insert into rate_limit_buckets as b (tenant_id, tokens, refreshed_at)
     select tenant_id, ${BUCKET_CAPACITY - 1}, clock_timestamp() from ${source}
     on conflict (tenant_id) do update
       set tokens = ${LEVEL} - 1, refreshed_at = clock_timestamp()
       where ${LEVEL} >= 1
     returning b.tokens`;
}

/** One token from the tenant's bucket: the tokens left, or null when the bucket is empty. */
export async function takeBucketToken(db: Knex, tenantId: string): Promise<number | null> {
  const { rows } = await db.raw(`with t as (select ?::uuid as tenant_id) ${takeTokenSql('t')}`, [tenantId]);
  return rows.length > 0 ? rows[0].tokens : null;
}

/** The tenant's bucket level now (0 when it has no row yet). */
export async function bucketLevel(db: Knex, tenantId: string): Promise<number> {
  const cur = await db.raw(`select ${LEVEL} as level from rate_limit_buckets b where b.tenant_id = ?`, [tenantId]);
  return Number(cur.rows[0]?.level ?? 0);
}
