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
// The bucket's level now: what it held plus the refill since, capped at capacity.
const LEVEL = `least(${BUCKET_CAPACITY}::float8, b.tokens + extract(epoch from (clock_timestamp() - b.refreshed_at)) * ${REFILL_PER_SECOND})`;

/**
 * `insert … select tenant_id from <source>` taking one token. ON CONFLICT DO UPDATE works on
 * the latest, locked row version, so concurrent requests from any replica serialise on the
 * bucket and never spend the same token twice. No row returned = bucket empty.
 */
export function takeTokenSql(source: string): string {
  return `insert into rate_limit_buckets as b (tenant_id, tokens, refreshed_at)
     select tenant_id, ${BUCKET_CAPACITY - 1}, clock_timestamp() from ${source}
     on conflict (tenant_id) do update
       set tokens = ${LEVEL} - 1, refreshed_at = clock_timestamp()
       where ${LEVEL} >= 1
     returning b.tokens`;
}

export async function takeToken(db: Knex, tenantId: string): Promise<RateDecision> {
  const { rows } = await db.raw(`with t as (select ?::uuid as tenant_id) ${takeTokenSql('t')}`, [tenantId]);
  return rows.length > 0 ? granted(rows[0].tokens) : refused(db, tenantId);
}

export function granted(tokensLeft: number): RateDecision {
  return { allowed: true, remaining: Math.floor(tokensLeft), retryAfterSeconds: 0 };
}

/** Only on the (rare) refused path: read the level to say when to retry. */
export async function refused(db: Knex, tenantId: string): Promise<RateDecision> {
  const cur = await db.raw(`select ${LEVEL} as level from rate_limit_buckets b where b.tenant_id = ?`, [tenantId]);
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
