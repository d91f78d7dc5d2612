import { proxyActivities } from '@temporalio/workflow';
import type * as activities from './activities';

const { touch } = proxyActivities<typeof activities>({ startToCloseTimeout: '10 seconds' });

/** The engine's floor: a workflow that does nothing. */
export async function emptyWorkflow(): Promise<void> {}

/** One activity round trip: what every event-processing workflow pays at least once. */
export async function oneActivityWorkflow(): Promise<number> {
  return touch(1);
}
