import {
  ScheduleAlreadyRunning,
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
  type Client,
  type ScheduleDescription,
} from '@temporalio/client';
import { scheduledExportsWorkflow } from '../workflows/scheduled-exports';

/**
 * The scheduled exports Schedule (docs/exports.md, "Scheduled exports to your bucket"):
 * `scheduled-exports-<task queue>` (one per deployment; each run uploads every active destination's
 * days up to today, by tenant id), at 00:20 UTC — after the digests of the day before (00:05) —
 * starting `scheduledExportsWorkflow`. Ensured by the api process at start; idempotent.
 */
export const scheduledExportScheduleId = (taskQueue: string) => `scheduled-exports-${taskQueue}`;

const CRON = '20 0 * * *';
const DAY_MS = 24 * 3_600_000;

function matches(d: ScheduleDescription, taskQueue: string): boolean {
  return (
    d.action.type === 'startWorkflow' &&
    d.action.workflowType === scheduledExportsWorkflow.name &&
    d.action.taskQueue === taskQueue &&
    d.policies.overlap === ScheduleOverlapPolicy.SKIP &&
    (d.spec.calendars?.length ?? 0) === 1 &&
    d.spec.calendars?.[0].hour?.[0]?.start === 0 &&
    d.spec.calendars?.[0].minute?.[0]?.start === 20
  );
}

export async function ensureScheduledExportSchedule(
  client: Client,
  taskQueue: string,
): Promise<'created' | 'updated' | 'unchanged'> {
  const scheduleId = scheduledExportScheduleId(taskQueue);
  const handle = client.schedule.getHandle(scheduleId);
  const current = await handle.describe().catch((err) => {
    if (err instanceof ScheduleNotFoundError) return null;
    throw err;
  });
  if (current && matches(current, taskQueue)) return 'unchanged';
  const options = {
    spec: { cronExpressions: [CRON] },
    action: {
      type: 'startWorkflow' as const,
      workflowType: scheduledExportsWorkflow,
      args: [] as [],
      taskQueue,
      workflowId: scheduleId,
    },
    // One run at a time; after an outage the next run covers the missed days too (windows end at today).
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: DAY_MS, pauseOnFailure: false },
    state: { note: 'uploads each tenant’s days up to today to its storage' },
  };
  if (!current) {
    try {
      await client.schedule.create({ scheduleId, ...options });
      return 'created';
    } catch (err) {
      if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    }
  }
  await handle.update((prev) => ({ ...prev, ...options, state: { ...prev.state, ...options.state } }));
  return 'updated';
}
