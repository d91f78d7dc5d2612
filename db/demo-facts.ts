import type { Knex } from 'knex';

export interface SyncRunState {
  status: string;
  result: Record<string, unknown> | null;
}

/**
 * One sync run's status and stored result (table `sync_runs`), for `npm start`, which follows
 * the demo's first sync from the outside and reports how it ended. Run inside withTenant.
 */
export async function syncRunState(trx: Knex.Transaction, runId: string): Promise<SyncRunState | undefined> {
  const row = await trx('sync_runs').where({ id: runId }).first('status', 'result');
  if (!row) return undefined;
  return { status: row.status, result: row.result ?? null }; // jsonb: pg parses it
}
