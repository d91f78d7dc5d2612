import type { Knex } from 'knex';

/**
 * The client endpoints' buckets (table `client_rate_limit_buckets`): sizes are
 * chosen by the caller (api/sdk/limits.ts), the arithmetic runs in `take_client_tokens`.
 */

export interface Bucket {
  name: string;
  capacity: number;
  refillPerSecond: number;
}

/**
 * One token from each bucket, or from none: one statement, so it holds across replicas and a
 * refused request writes nothing. `buckets` must come in a fixed order (the caller sorts by
 * name) so concurrent requests sharing buckets lock them alike. Answers whether all were taken
 * and each bucket's level, in the order given.
 */
export async function takeClientBucketTokens(
  db: Knex,
  tenantId: string,
  buckets: readonly Bucket[],
): Promise<{ ok: boolean; levels: number[] }> {
  const { rows } = await db
    .raw('select ok, levels from take_client_tokens(?::uuid, ?::text[], ?::float8[], ?::float8[])', [
      tenantId,
      buckets.map((b) => b.name),
      buckets.map((b) => b.capacity),
      buckets.map((b) => b.refillPerSecond),
    ])
    .options({ prepare: true });
  return { ok: rows[0].ok, levels: (rows[0].levels as number[]).map(Number) };
}

/** Delete the rows of buckets untouched for `idleSeconds`: past any refill time, a missing row is a full bucket. */
export async function pruneIdleClientBuckets(db: Knex, idleSeconds: number): Promise<void> {
  await db.raw(`delete from client_rate_limit_buckets where refreshed_at < now() - make_interval(secs => ?)`, [
    idleSeconds,
  ]);
}
