import type { Client } from '@temporalio/client';
import { scheduledExportsWorkflow } from '../workflows/scheduled-exports';
import { deploymentScheduleId, ensureDeploymentSchedule, type DeploymentSchedule } from './deployment-schedule';

/**
 * The scheduled exports schedule (docs/exports.md, "Scheduled exports to your bucket"): each run
 * uploads every active destination's days up to today, by tenant id, at 00:20 UTC — after the
 * digests of the day before (00:05); after an outage the next run covers the missed days too.
 */
const SCHEDULED_EXPORTS: DeploymentSchedule = {
  name: 'scheduled-exports',
  workflow: scheduledExportsWorkflow,
  spec: { cronExpressions: ['20 0 * * *'] },
  hasSpec: (d) =>
    (d.spec.calendars?.length ?? 0) === 1 &&
    d.spec.calendars?.[0].hour?.[0]?.start === 0 &&
    d.spec.calendars?.[0].minute?.[0]?.start === 20,
  note: 'uploads each tenant’s days up to today to its storage',
};

export const scheduledExportScheduleId = (taskQueue: string) => deploymentScheduleId(SCHEDULED_EXPORTS.name, taskQueue);

export const ensureScheduledExportSchedule = (client: Client, taskQueue: string) =>
  ensureDeploymentSchedule(client, taskQueue, SCHEDULED_EXPORTS);
