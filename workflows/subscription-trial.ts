import { proxyActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../activities';

const { recordTrialEnded } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

export interface TrialInput {
  tenantId: string;
  subscriptionId: string;
  trialEndsAt: string;
}

/** A trial is a durable timer: wait until it ends (surviving restarts), then record the end. */
export async function subscriptionTrialWorkflow(input: TrialInput): Promise<{ trialEndedAt: string | null }> {
  const remaining = Date.parse(input.trialEndsAt) - Date.now();
  if (remaining > 0) await sleep(remaining);
  return recordTrialEnded({ tenantId: input.tenantId, subscriptionId: input.subscriptionId, endedAt: input.trialEndsAt });
}
