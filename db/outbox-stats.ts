import type { Knex } from 'knex';

/** The most rows the depth counts: past it, it reads this (at least so many). */
export const OUTBOX_DEPTH_COUNTED = 10_000;

export interface OutboxStats {
  /**
   * Rows of one task queue (the one this deployment's dispatchers drain) waiting to be handed to Temporal, counted up
   * to OUTBOX_DEPTH_COUNTED.
   */
  depth: number;
  /** Age of the oldest one in seconds; 0 when the outbox is empty. */
  oldestAgeSeconds: number;
}

/**
 * How far the webhook outbox is behind, for /readyz and the metrics. While Temporal is away the outbox grows with
 * every receipt, and this runs at every scrape beside the receive path: so it reads a bounded amount whatever the
 * backlog. The oldest row is the first by id (ids come from a sequence, in the order rows were stored); the depth is
 * counted up to OUTBOX_DEPTH_COUNTED rows of the task queue's index (test/webhooks/receive-path-statements.test.ts).
 */
export async function outboxStats(db: Knex, taskQueue: string): Promise<OutboxStats> {
  const { rows } = await db.raw<{ rows: { depth: number; oldest: string | null }[] }>(
    `select (select count(*) from (select 1 from webhook_outbox where task_queue = ? limit ?) c)::int as depth,
            extract(epoch from now() - (select created_at from webhook_outbox where task_queue = ? order by id limit 1))
              as oldest`,
    [taskQueue, OUTBOX_DEPTH_COUNTED, taskQueue],
  );
  return { depth: rows[0].depth, oldestAgeSeconds: Math.max(0, Number(rows[0].oldest ?? 0)) };
}
