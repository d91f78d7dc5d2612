import type { Knex } from 'knex';
import { BUCKET_CAPACITY, bucketLevel, REFILL_PER_SECOND, takeBucketToken } from '../db/rate-limits';
import { ApiError } from '../operations/errors';

export { BUCKET_CAPACITY, REFILL_PER_SECOND };

export interface RateDecision {
  allowed: boolean;
  remaining: number;
  retryAfterSeconds: number;
}

/**
 * Per-tenant token bucket kept in Postgres (db/rate-limits.ts), so every replica and every
 * surface draws from the same bucket: one atomic upsert refills by elapsed time and takes a
 * token if there is one.
 */
export async function takeToken(db: Knex, tenantId: string): Promise<RateDecision> {
  const tokensLeft = await takeBucketToken(db, tenantId);
  return tokensLeft !== null ? granted(tokensLeft) : refused(db, tenantId);
}

export function granted(tokensLeft: number): RateDecision {
  return { allowed: true, remaining: Math.floor(tokensLeft), retryAfterSeconds: 0 };
}

/** Only on the (rare) refused path: read the level to say when to retry. */
export async function refused(db: Knex, tenantId: string): Promise<RateDecision> {
  const missing = 1 - (await bucketLevel(db, tenantId));
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
  new ApiError(
    429,
    'rate_limited',
    `Rate limit of ${BUCKET_CAPACITY} requests (refilling ${REFILL_PER_SECOND}/s) exhausted; retry after ${d.retryAfterSeconds} s.`,
    {},
    {
      'Retry-After': String(d.retryAfterSeconds),
      ...rateHeaders(d),
    },
  );
