import type { Client } from '@temporalio/client';
import { reconciliationScheduleId, type ReconciliationGroup } from '../../domain/reconciliation-schedule';
import type { ReconciliationProgress } from '../../workflows/reconciliation-run';
import { until } from './until';

/**
 * Trigger one of a tenant's reconciliation schedules now and wait for the run it started.
 *
 * `aim` points the schedule at this file's worker first: another test file's real api process,
 * as it starts, ensures every tenant's schedules on its own task queue (in production every
 * process shares one queue, so nothing moves). Runs are known by their run ids: two runs
 * triggered within one second share the workflow id (its time is to the second).
 */
export async function triggerScheduledRun(
  client: Client,
  tenantId: string,
  group: ReconciliationGroup,
  aim: () => Promise<unknown>,
): Promise<{ workflowId: string; progress: ReconciliationProgress }> {
  const handle = client.schedule.getHandle(reconciliationScheduleId(tenantId, group));
  const runOf = (a: { action: { workflow: { firstExecutionRunId: string } } }) => a.action.workflow.firstExecutionRunId;
  const seen = new Set((await handle.describe()).info.recentActions.map(runOf));
  await aim();
  await handle.trigger();
  const described = await until(
    `the triggered ${group} run`,
    () => handle.describe(),
    (d) => d.info.recentActions.some((a) => !seen.has(runOf(a))),
    30_000,
  );
  const { workflowId, firstExecutionRunId } = described.info.recentActions.find((a) => !seen.has(runOf(a)))!.action
    .workflow;
  const progress = (await client.workflow
    .getHandle(workflowId, firstExecutionRunId)
    .result()) as ReconciliationProgress;
  return { workflowId, progress };
}
