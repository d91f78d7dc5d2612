import {
  ScheduleAlreadyRunning,
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
  type Client,
  type ScheduleDescription,
} from '@temporalio/client';
import { eventDigestsWorkflow } from '../workflows/event-digests';

/**
 * The daily digest Schedule (docs/event-proofs.md, "Daily digest"): `event-digests-<task queue>`
 * (one per deployment; each run makes every tenant's digest of the day before, by tenant id), at
 * 00:05 UTC, starting `eventDigestsWorkflow`. Ensured by the api process at start; idempotent.
 */
export const eventDigestScheduleId = (taskQueue: string) => `event-digests-${taskQueue}`;

const CRON = '5 0 * * *';
const DAY_MS = 24 * 3_600_000;

function matches(d: ScheduleDescription, taskQueue: string): boolean {
  return (
    d.action.type === 'startWorkflow' &&
    d.action.workflowType === eventDigestsWorkflow.name &&
    d.action.taskQueue === taskQueue &&
    d.policies.overlap === ScheduleOverlapPolicy.SKIP &&
    (d.spec.calendars?.length ?? 0) === 1 &&
    d.spec.calendars?.[0].hour?.[0]?.start === 0 &&
    d.spec.calendars?.[0].minute?.[0]?.start === 5
  );
}

export async function ensureEventDigestSchedule(
  client: Client,
  taskQueue: string,
): Promise<'created' | 'updated' | 'unchanged'> {
  const scheduleId = eventDigestScheduleId(taskQueue);
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
      workflowType: eventDigestsWorkflow,
      args: [] as [],
      taskQueue,
      workflowId: scheduleId,
    },
    // One run at a time; after an outage the missed day is still made (each run names its own day).
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: DAY_MS, pauseOnFailure: false },
    state: { note: 'signs each tenant’s digest of the day before' },
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
