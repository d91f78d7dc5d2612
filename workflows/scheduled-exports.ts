import {
  ApplicationFailure,
  ActivityFailure,
  ParentClosePolicy,
  condition,
  continueAsNew,
  log,
  patched,
  proxyActivities,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { Activities } from '../activities';
import { EXPORT_TABLE_NAMES } from '../domain/export-schema';
import { runAttributes } from './search-attributes';

const { exportDestinationsDue, beginDestinationRun, finishDestinationRun, failDestinationRun } =
  proxyActivities<Activities>({
    startToCloseTimeout: '2 minutes',
    retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 5 },
  });
/**
 * A table's object is one activity: it heartbeats per page read and while uploading, so a worker
 * that dies mid-table is noticed in seconds and the table is read and uploaded again on another,
 * to the same key (its watermark had not moved).
 */
const { uploadDestinationTable } = proxyActivities<Activities>({
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 5 },
});

const PAGE = 100;
const PER_RUN = 200;
/** Tenants exported at once by one tick: a large tenant holds one of these, the others go on through the rest. */
export const SCHEDULED_EXPORTS_AT_ONCE = 4;

/** One tenant's scheduled export: at most one at a time per tenant (a tick finding it still running leaves it be). */
export const tenantScheduledExportWorkflowId = (tenantId: string) => `scheduled-export-${tenantId}`;

export interface ScheduledExportsInput {
  /** The last tenant started (continue-as-new carries it). */
  after?: string | null;
  /** `YYYY-MM-DD`: new runs end at the start of that day rather than today's (catching up in steps). */
  until?: string;
  /** Only these tenants (a run started by hand for some); absent: every active destination. */
  tenants?: string[];
  /** How many tenants' exports run at once (default SCHEDULED_EXPORTS_AT_ONCE). */
  atOnce?: number;
  /** How long the tick waits for the exports it started (default TICK_WAIT_MS; tests shorten it). */
  waitMs?: number;
  /** When the tick stops waiting (ms since the epoch; continue-as-new carries it). */
  waitUntil?: number;
}

/**
 * A tick waits for the exports it started at most this long. One tick runs at a time (the
 * Schedule skips a tick while the last one runs), so a tenant's export still running at the next
 * day's time would otherwise hold every tenant's next export: past this the tick ends, that export
 * goes on alone (its child is abandoned, not cancelled), and the next tick skips only that tenant.
 */
export const TICK_WAIT_MS = 20 * 3_600_000;

/**
 * One tick of the scheduled exports Schedule (`scheduled-exports-<task queue>`, docs/exports.md):
 * each tenant with an active destination gets its own child workflow,
 * `scheduled-export-<tenant>` (tenantScheduledExportWorkflow), at most `atOnce` running together,
 * each started as soon as one ends; so a tenant with a huge export, or a slow or failing store,
 * holds one place and never the others' exports. Tenant and run ids only in the history.
 */
export async function scheduledExportsWorkflow(input: ScheduledExportsInput = {}): Promise<{ runs: number }> {
  let after = input.after ?? null;
  let runs = 0;
  const atOnce = Math.max(1, Math.floor(input.atOnce ?? SCHEDULED_EXPORTS_AT_ONCE));
  const running = new Set<Promise<void>>();
  // Ticks begun before the wait was bounded replay as they ran: waiting for every export.
  const bounded = patched('scheduled-exports-bounded-wait');
  const waitUntil = input.waitUntil ?? Date.now() + (input.waitMs ?? TICK_WAIT_MS);
  /** Waits for `done`, unless the tick's time is up; answers whether `done` holds. */
  const waitFor = async (done: () => boolean): Promise<boolean> => {
    if (!bounded) {
      while (!done()) await Promise.race(running);
      return true;
    }
    const left = waitUntil - Date.now();
    return done() || (left > 0 && (await condition(done, left)));
  };
  const start = async (tenantId: string) => {
    let child;
    try {
      child = await startChild(tenantScheduledExportWorkflow, {
        workflowId: tenantScheduledExportWorkflowId(tenantId),
        args: [{ tenantId, until: input.until }],
        // Waited for below; a tick that is itself ended (terminated by an operator) leaves them to finish.
        parentClosePolicy: ParentClosePolicy.ABANDON,
        typedSearchAttributes: runAttributes('scheduled-export', tenantId),
      });
    } catch (err) {
      // Still running from an earlier tick (a large export): it goes on, and covers the days it reaches.
      if (err instanceof WorkflowExecutionAlreadyStartedError) return;
      throw err;
    }
    try {
      if ((await child.result()).ran) runs++;
    } catch {
      // Its failure is its own (recorded on its run by itself); the other tenants go on.
      log.warn('a tenant’s scheduled export failed', { tenantId });
    }
  };
  walk: for (;;) {
    const due = input.tenants
      ? input.tenants.filter((t) => after === null || t > after).sort()
      : await exportDestinationsDue({ after, max: PAGE });
    if (!due.length) break;
    for (const tenantId of due) {
      // Time is up with every place taken: the rest wait for the next tick.
      if (!(await waitFor(() => running.size < atOnce))) break walk;
      after = tenantId;
      const p: Promise<void> = start(tenantId).finally(() => running.delete(p));
      running.add(p);
    }
    if (runs + running.size >= PER_RUN || workflowInfo().continueAsNewSuggested) {
      if (!(await waitFor(() => running.size === 0))) return { runs };
      await continueAsNew<typeof scheduledExportsWorkflow>({ ...input, after, ...(bounded ? { waitUntil } : {}) });
    }
  }
  await waitFor(() => running.size === 0);
  return { runs };
}

/**
 * One tenant's run: the open one resumed, or a new one up to the start of today (UTC), one table
 * after the other, then the manifest held against the digests. A failure is recorded on the run and
 * the destination (retried on the next tick; stopped after a few, or at once when the digests
 * disagree) and ends this workflow normally.
 */
export async function tenantScheduledExportWorkflow(input: {
  tenantId: string;
  until?: string;
}): Promise<{ ran: boolean }> {
  const { tenantId } = input;
  const run = await beginDestinationRun({ tenantId, until: input.until });
  if (!run) return { ran: false };
  try {
    for (const table of EXPORT_TABLE_NAMES) await uploadDestinationTable({ tenantId, runId: run.runId, table });
    await finishDestinationRun({ tenantId, runId: run.runId });
  } catch (err) {
    const cause = err instanceof ActivityFailure ? err.cause : err;
    if (cause instanceof ApplicationFailure && cause.type === 'RunClosed') return { ran: true };
    const ours =
      cause instanceof ApplicationFailure && (cause.type === 'ExportRefused' || cause.type === 'DigestMismatch');
    await failDestinationRun({
      tenantId,
      runId: run.runId,
      error: ours ? cause.message : 'The export stopped on an internal error; it is retried on the next run.',
      stop: ours && cause.type === 'DigestMismatch',
    });
  }
  return { ran: true };
}
