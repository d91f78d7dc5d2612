import {
  ScheduleAlreadyRunning,
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
  type Client,
  type ScheduleDescription,
} from '@temporalio/client';
import { signingKeyRotationWorkflow } from '../workflows/signing-key-rotation';

/**
 * The deployment's key rotation Schedule (docs/entitlement-tokens.md, "Rotating and withdrawing
 * keys"): `signing-key-rotation-<task queue>` (a deployment is its queue; no tenant: the keys are
 * the deployment's), once a day, starting `signingKeyRotationWorkflow`, which rotates only a key
 * that has signed for the rotation interval. Ensured by the api process at start; idempotent.
 */
export const signingKeyScheduleId = (taskQueue: string) => `signing-key-rotation-${taskQueue}`;

const DAY_MS = 24 * 3_600_000;

function matches(d: ScheduleDescription, taskQueue: string): boolean {
  return (
    d.spec.intervals?.length === 1 &&
    d.spec.intervals[0].every === DAY_MS &&
    d.action.type === 'startWorkflow' &&
    d.action.workflowType === signingKeyRotationWorkflow.name &&
    d.action.taskQueue === taskQueue &&
    d.policies.overlap === ScheduleOverlapPolicy.SKIP
  );
}

export async function ensureSigningKeySchedule(
  client: Client,
  taskQueue: string,
): Promise<'created' | 'updated' | 'unchanged'> {
  const scheduleId = signingKeyScheduleId(taskQueue);
  const handle = client.schedule.getHandle(scheduleId);
  const current = await handle.describe().catch((err) => {
    if (err instanceof ScheduleNotFoundError) return null;
    throw err;
  });
  if (current && matches(current, taskQueue)) return 'unchanged';
  const options = {
    spec: { intervals: [{ every: DAY_MS }] },
    action: {
      type: 'startWorkflow' as const,
      workflowType: signingKeyRotationWorkflow,
      args: [] as [],
      taskQueue,
      workflowId: scheduleId,
    },
    // One tick at a time; after an outage, one missed tick is taken, not a burst.
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: DAY_MS, pauseOnFailure: false },
    state: { note: 'rotates the signing key of entitlement tokens and digests once it is due' },
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
