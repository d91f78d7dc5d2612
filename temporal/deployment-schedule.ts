import {
  ScheduleAlreadyRunning,
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
  type Client,
  type ScheduleDescription,
  type ScheduleSpec,
} from '@temporalio/client';
import type { Workflow } from '@temporalio/workflow';

/**
 * A schedule of the deployment (no tenant: its workflow walks every tenant itself, by tenant id),
 * named `<name>-<task queue>` because a deployment is its queue, starting one argument-less
 * workflow, one run at a time, catching up at most one missed day. Ensured by the api process at
 * start (api/main.ts); idempotent, so every replica may call it.
 */
export interface DeploymentSchedule {
  name: string;
  workflow: Workflow;
  spec: ScheduleSpec;
  /** Whether a described schedule already has this spec (Temporal answers specs in its own shape). */
  hasSpec: (d: ScheduleDescription) => boolean;
  note: string;
  /** How late a missed run may still start after an outage (a day unless the schedule is more frequent). */
  catchupWindowMs?: number;
}

export type EnsureOutcome = 'created' | 'updated' | 'unchanged';

const DAY_MS = 24 * 3_600_000;

export const deploymentScheduleId = (name: string, taskQueue: string) => `${name}-${taskQueue}`;

function matches(d: ScheduleDescription, s: DeploymentSchedule, taskQueue: string): boolean {
  return (
    d.action.type === 'startWorkflow' &&
    d.action.workflowType === s.workflow.name &&
    d.action.taskQueue === taskQueue &&
    d.policies.overlap === ScheduleOverlapPolicy.SKIP &&
    s.hasSpec(d)
  );
}

export async function ensureDeploymentSchedule(
  client: Client,
  taskQueue: string,
  s: DeploymentSchedule,
): Promise<EnsureOutcome> {
  const scheduleId = deploymentScheduleId(s.name, taskQueue);
  const handle = client.schedule.getHandle(scheduleId);
  const current = await handle.describe().catch((err) => {
    if (err instanceof ScheduleNotFoundError) return null;
    throw err;
  });
  if (current && matches(current, s, taskQueue)) return 'unchanged';
  const options = {
    spec: s.spec,
    action: {
      type: 'startWorkflow' as const,
      workflowType: s.workflow,
      args: [] as [],
      taskQueue,
      workflowId: scheduleId,
    },
    // One run at a time; after an outage one missed run is taken, not a burst.
    policies: {
      overlap: ScheduleOverlapPolicy.SKIP,
      catchupWindow: s.catchupWindowMs ?? DAY_MS,
      pauseOnFailure: false,
    },
    state: { note: s.note },
  };
  if (!current) {
    try {
      await client.schedule.create({ scheduleId, ...options });
      return 'created';
    } catch (err) {
      // Another replica made it meanwhile: bring it to this definition like any other.
      if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    }
  }
  await handle.update((prev) => ({ ...prev, ...options, state: { ...prev.state, ...options.state } }));
  return 'updated';
}
