import { condition, defineSignal, proxyActivities, setHandler } from '@temporalio/workflow';
import type { Activities } from '../activities';

const { expireHeldChange } = proxyActivities<Activities>({
  startToCloseTimeout: '15 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

export interface ChangeApprovalInput {
  tenantId: string;
  changeId: string;
  /** How long a person has to decide; the timer is durable (it survives worker restarts). */
  expiresInSeconds: number;
}

/** A person decided (the approve or reject operation has already recorded the outcome). */
export const changeDecidedSignal = defineSignal<[{ tenantId: string; status: string }]>('decided');

/**
 * `change-<tenant>-<change id>`: one write held for a person's approval (docs/approvals.md). Ids
 * only: the input and the plan stay in the database. The operations that approve or reject
 * record the outcome themselves (the row is the truth, under a guarded update) and then signal
 * here; if no signal comes before the expiry, the expiry activity closes the change, writing
 * nothing else. A signal naming another tenant is ignored.
 */
export async function changeApprovalWorkflow(input: ChangeApprovalInput): Promise<{ status: string }> {
  let decided: string | undefined;
  setHandler(changeDecidedSignal, (s) => {
    if (s.tenantId === input.tenantId) decided ??= s.status;
  });
  const inTime = await condition(() => decided !== undefined, input.expiresInSeconds * 1000);
  if (inTime) return { status: decided! };
  const { status } = await expireHeldChange({ tenantId: input.tenantId, changeId: input.changeId });
  return { status };
}
