import type { Knex } from 'knex';

export interface OutboxStats {
  /** Rows of one task queue (the one this deployment's dispatchers drain) waiting to be handed to Temporal. */
  depth: number;
  /** Age of the oldest one in seconds; 0 when the outbox is empty. */
  oldestAgeSeconds: number;
}

/**
 * How far the webhook outbox is behind, for /readyz and the metrics: one aggregate over a table
 * the dispatcher keeps short (rows leave it once handed over), so cheap at every scrape.
 */
export async function outboxStats(db: Knex, taskQueue: string): Promise<OutboxStats> {
  const { rows } = await db.raw<{ rows: { depth: number; oldest: string | null }[] }>(
    `select count(*)::int as depth, extract(epoch from now() - min(created_at)) as oldest from webhook_outbox where task_queue = ?`,
    [taskQueue],
  );
  return { depth: rows[0].depth, oldestAgeSeconds: Math.max(0, Number(rows[0].oldest ?? 0)) };
}
