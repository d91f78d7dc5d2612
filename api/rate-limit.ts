import type { Knex } from 'knex';
import { ApiError } from './errors';

export const BUCKET_CAPACITY = 120;
export const REFILL_PER_SECOND = 1;

export interface RateDecision {
  allowed: boolean;
  remaining: number;
  retryAfterSeconds: number;
}

/**
 * Per-tenant token bucket kept in Postgres, so every replica and every surface (both REST
 * hosts, the tool server) draws from the same bucket. One atomic upsert: refill by elapsed
 * time, take a token if there is one.
 */
export async function takeToken(db: Knex, tenantId: string): Promise<RateDecision> {
  // ON CONFLICT DO UPDATE works on the latest, locked row version, so concurrent requests
  // from any replica serialise on the bucket and never spend the same token twice.
  const level = `least(${BUCKET_CAPACITY}::float8, b.tokens + extract(epoch from (clock_timestamp() - b.refreshed_at)) * ${REFILL_PER_SECOND})`;
  const { rows } = await db.raw(
    `insert into rate_limit_buckets as b (tenant_id, tokens, refreshed_at)
     values (?, ${BUCKET_CAPACITY - 1}, clock_timestamp())
     on conflict (tenant_id) do update
       set tokens = ${level} - 1, refreshed_at = clock_timestamp()
       where ${level} >= 1
     returning tokens`,
    [tenantId],
  );
  if (rows.length > 0) return { allowed: true, remaining: Math.floor(rows[0].tokens), retryAfterSeconds: 0 };
  const cur = await db.raw(`select ${level} as level from rate_limit_buckets b where b.tenant_id = ?`, [tenantId]);
  const missing = 1 - Number(cur.rows[0]?.level ?? 0);
  return { allowed: false, remaining: 0, retryAfterSeconds: Math.max(1, Math.ceil(missing / REFILL_PER_SECOND)) };
}

export function rateHeaders(d: RateDecision): Record<string, string> {
  const reset = d.allowed ? Math.ceil((BUCKET_CAPACITY - d.remaining) / REFILL_PER_SECOND) : d.retryAfterSeconds;
  return {
    'RateLimit-Limit': String(BUCKET_CAPACITY),
    'RateLimit-Remaining': String(d.remaining),
    'RateLimit-Reset': String(reset),
    'RateLimit-Policy': `${BUCKET_CAPACITY};w=${BUCKET_CAPACITY / REFILL_PER_SECOND}`,
  };
}

export const rateLimited = (d: RateDecision) =>
  new ApiError(429, 'rate_limited', `Rate limit of ${BUCKET_CAPACITY} requests (refilling ${REFILL_PER_SECOND}/s) exhausted; retry after ${d.retryAfterSeconds} s.`, {}, {
    'Retry-After': String(d.retryAfterSeconds),
    ...rateHeaders(d),
  });
