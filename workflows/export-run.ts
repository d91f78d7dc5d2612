import { ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { EXPORT_TABLE_NAMES } from '../domain/export-schema';

/**
 * A table's file is one activity: it heartbeats per page read, so a worker that dies mid-file is
 * noticed in seconds and the file is written again from the start on another (the half-written
 * one was never stored). A table that keeps failing fails the export with our own reason.
 */
const { exportTable } = proxyActivities<Activities>({
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 5 },
});
const { finishExportRun } = proxyActivities<Activities>({
  startToCloseTimeout: '15 seconds',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '10 seconds' },
});

export interface ExportRunInput {
  tenantId: string;
  exportId: string;
}

/** `export-<tenant>-<export>`: started by `POST /v1/exports` (temporal/workflow-starts.ts). */
export const exportRunWorkflowId = (tenantId: string, exportId: string) => `export-${tenantId}-${exportId}`;

/**
 * One export (docs/exports.md): one file per table, one table after the other; ids only in the
 * history (the rows go from Postgres to the file inside the activity). The export's row says
 * `succeeded` when every file is stored, `failed` with the reason otherwise.
 */
export async function exportRunWorkflow(input: ExportRunInput): Promise<void> {
  const { tenantId, exportId } = input;
  try {
    for (const table of EXPORT_TABLE_NAMES) await exportTable({ tenantId, exportId, table });
    await finishExportRun({ tenantId, exportId });
  } catch (err) {
    const failed =
      err instanceof ApplicationFailure && err.type === 'ExportRefused'
        ? err.message
        : 'The export stopped on an internal error; start another: files written so far are kept with this one.';
    await finishExportRun({ tenantId, exportId, failed });
  }
}
