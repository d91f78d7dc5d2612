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

/** Whether the demo history was made (its audit entry, written when the last buyer was). Run inside withTenant. */
export async function demoHistoryDone(trx: Knex.Transaction, action: string): Promise<boolean> {
  return !!(await trx('audit_entries').where({ action }).first('id'));
}

/**
 * The demo history's records already written (`sub_demo_0001`, `demo-ios-0001`, …), so a start
 * interrupted midway writes only the buyers it had not reached. Run inside withTenant.
 */
export async function demoHistoryStarted(trx: Knex.Transaction): Promise<Set<string>> {
  const rows: { external_id: string }[] = await trx('subscriptions')
    .where('external_id', '~', '^(sub_demo_[0-9]{4}|demo-(ios|play)-[0-9]{4})$')
    .select('external_id');
  return new Set(rows.map((r) => r.external_id));
}
