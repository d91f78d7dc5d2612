import {
  ApplicationFailure,
  ActivityFailure,
  continueAsNew,
  proxyActivities,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { EXPORT_TABLE_NAMES } from '../domain/export-schema';

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

export interface ScheduledExportsInput {
  /** The last tenant done (continue-as-new carries it). */
  after?: string | null;
  /** `YYYY-MM-DD`: new runs end at the start of that day rather than today's (catching up in steps). */
  until?: string;
  /** Only these tenants (a run started by hand for some); absent: every active destination. */
  tenants?: string[];
}

/**
 * One tick of the scheduled exports Schedule (`scheduled-exports-<task queue>`, docs/exports.md):
 * each tenant with an active destination gets its run — the open one resumed, or a new one up to
 * the start of today (UTC) — one table after the other, then the manifest held against the digests.
 * A tenant's failure is recorded on its run and destination (retried on the next tick; stopped
 * after a few, or at once when the digests disagree) and never stops the other tenants. Tenant and
 * run ids only in the history.
 */
export async function scheduledExportsWorkflow(input: ScheduledExportsInput = {}): Promise<{ runs: number }> {
  let after = input.after ?? null;
  let runs = 0;
  for (;;) {
    const due = input.tenants
      ? input.tenants.filter((t) => after === null || t > after).sort()
      : await exportDestinationsDue({ after, max: PAGE });
    if (!due.length) return { runs };
    for (const tenantId of due) {
      after = tenantId;
      const run = await beginDestinationRun({ tenantId, until: input.until });
      if (!run) continue;
      runs++;
      try {
        for (const table of EXPORT_TABLE_NAMES) await uploadDestinationTable({ tenantId, runId: run.runId, table });
        await finishDestinationRun({ tenantId, runId: run.runId });
      } catch (err) {
        const cause = err instanceof ActivityFailure ? err.cause : err;
        if (cause instanceof ApplicationFailure && cause.type === 'RunClosed') continue;
        const ours =
          cause instanceof ApplicationFailure && (cause.type === 'ExportRefused' || cause.type === 'DigestMismatch');
        await failDestinationRun({
          tenantId,
          runId: run.runId,
          error: ours ? cause.message : 'The export stopped on an internal error; it is retried on the next run.',
          stop: ours && cause.type === 'DigestMismatch',
        });
      }
    }
    if (runs >= PER_RUN || workflowInfo().continueAsNewSuggested)
      await continueAsNew<typeof scheduledExportsWorkflow>({ ...input, after });
  }
}
