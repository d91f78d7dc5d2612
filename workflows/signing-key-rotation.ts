import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';

const { rotateSigningKeyIfDue } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  // Bounded: a rotation that keeps failing is a failed run the Schedule's next tick retries.
  retry: { initialInterval: '5 seconds', maximumInterval: '1 minute', maximumAttempts: 5 },
});

/**
 * One tick of the deployment's key rotation Schedule (`signing-key-rotation-<queue>`,
 * docs/entitlement-tokens.md, "Rotating and withdrawing keys"): a new key signs once the active
 * one has signed for the rotation interval; otherwise nothing changes. Kids only in its history.
 */
export async function signingKeyRotationWorkflow(): Promise<{ kid: string; rotated: boolean }> {
  return rotateSigningKeyIfDue();
}
