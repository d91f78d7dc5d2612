import {
  ScheduleAlreadyRunning,
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
  type Client,
  type ScheduleDescription,
} from '@temporalio/client';
import { oauthCleanupWorkflow } from '../workflows/oauth-cleanup';

/**
 * The sign-in records' cleanup Schedule (docs/assistant-sign-in.md, "Expired records"):
 * `oauth-cleanup-<task queue>` (one per deployment, no tenant: the authorization server's records
 * are presented before any tenant is known and carry none), hourly, starting `oauthCleanupWorkflow`,
 * which deletes what has expired in bounded batches. Ensured by the api process at start; idempotent.
 */
export const oauthCleanupScheduleId = (taskQueue: string) => `oauth-cleanup-${taskQueue}`;

const HOUR_MS = 3_600_000;

function matches(d: ScheduleDescription, taskQueue: string): boolean {
  return (
    d.spec.intervals?.length === 1 &&
    d.spec.intervals[0].every === HOUR_MS &&
    d.action.type === 'startWorkflow' &&
    d.action.workflowType === oauthCleanupWorkflow.name &&
    d.action.taskQueue === taskQueue &&
    d.policies.overlap === ScheduleOverlapPolicy.SKIP
  );
}

export async function ensureOAuthCleanupSchedule(
  client: Client,
  taskQueue: string,
): Promise<'created' | 'updated' | 'unchanged'> {
  const scheduleId = oauthCleanupScheduleId(taskQueue);
  const handle = client.schedule.getHandle(scheduleId);
  const current = await handle.describe().catch((err) => {
    if (err instanceof ScheduleNotFoundError) return null;
    throw err;
  });
  if (current && matches(current, taskQueue)) return 'unchanged';
  const options = {
    spec: { intervals: [{ every: HOUR_MS }] },
    action: {
      type: 'startWorkflow' as const,
      workflowType: oauthCleanupWorkflow,
      args: [] as [],
      taskQueue,
      workflowId: scheduleId,
    },
    // One run at a time; after an outage, one missed tick is taken, not a burst.
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: HOUR_MS, pauseOnFailure: false },
    state: { note: 'deletes expired assistant sign-in codes, tokens and sessions in bounded batches' },
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
