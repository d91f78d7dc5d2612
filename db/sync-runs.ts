import type { Knex } from 'knex';
import type { SyncEvent } from '../domain/sync-plan';
import { pageFromSql, readerOf, rows, type PageRequest, type PageSource, type RowPage } from './paging';

/**
 * The run tables: `sync_runs` (one row per run; a `running` row is the tenant's drain lock,
 * held by a partial unique index) and `sync_events` (one row per provider of a run). In the
 * caller's tenant transaction.
 */

export interface NewRun {
  runId: string;
  tenantId: string;
  kind: 'sync' | 'product-sync';
  confirmCount: number | null;
  requestedBy: string | null;
  /** The Temporal workflow running it: what the dashboard shows and operators look up. */
  workflowId: string;
}

/**
 * Take the tenant's drain lock for this run; false when another run holds it. Idempotent for
 * the same run (an activity retried after it committed finds its own row and holds the lock).
 */
export async function takeDrainLock(trx: Knex.Transaction, run: NewRun): Promise<boolean> {
  if (await trx('sync_runs').where({ id: run.runId }).first('id')) return true;
  try {
    // A savepoint, so the unique violation leaves the caller's transaction usable.
    await trx.transaction((sp) =>
      sp('sync_runs').insert({
        id: run.runId,
        tenant_id: run.tenantId,
        kind: run.kind,
        status: 'running',
        confirm_count: run.confirmCount,
        requested_by: run.requestedBy,
        workflow_id: run.workflowId,
      }),
    );
    return true;
  } catch (e) {
    if ((e as { code?: string }).code === '23505') return false;
    throw e;
  }
}

/** One event per provider and run: a retried activity that already wrote it adds nothing. */
export async function recordSyncEvent(
  trx: Knex.Transaction,
  tenantId: string,
  runId: string,
  event: SyncEvent,
): Promise<void> {
  if (await trx('sync_events').where({ run_id: runId, provider: event.provider }).first('id')) return;
  await trx('sync_events').insert({
    tenant_id: tenantId,
    run_id: runId,
    provider: event.provider,
    status: event.status,
    reason: event.reason,
    detail: JSON.stringify(event.detail),
  });
}

/** Close the run: releases the tenant's drain lock. */
export async function finishSyncRun(
  trx: Knex.Transaction,
  runId: string,
  ok: boolean,
  result: Record<string, unknown>,
): Promise<void> {
  await trx('sync_runs')
    .where({ id: runId })
    .update({
      status: ok ? 'succeeded' : 'failed',
      result: JSON.stringify(result),
      finished_at: trx.fn.now(),
      updated_at: trx.fn.now(),
    });
}

export interface RunRow {
  id: string;
  kind: NewRun['kind'];
  status: string;
  requested_by: string | null;
  workflow_id: string | null;
  created_at: Date;
  finished_at: Date | null;
}

/** The newest runs first (the dashboard's list, the overview's last run): a list, so written SQL. */
export async function recentRuns(src: PageSource, limit = 100): Promise<RunRow[]> {
  return (await readerOf(src).rows(
    `select id, kind, status, requested_by, workflow_id, created_at, finished_at
       from sync_runs order by created_at desc limit $1`,
    [limit],
  )) as RunRow[];
}

/** The sync events list page (GET /v1/sync/events): newest first, each filter optional. */
export function syncEventPage(
  src: PageSource,
  filters: { run_id?: string; provider?: string; status?: string },
  page: PageRequest,
): Promise<RowPage> {
  return pageFromSql(src, { table: 'sync_events', columns: 'sync_events.*', from: 'sync_events', filters }, page, rows);
}
