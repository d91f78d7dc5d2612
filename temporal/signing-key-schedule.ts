import type { Client } from '@temporalio/client';
import { signingKeyRotationWorkflow } from '../workflows/signing-key-rotation';
import { deploymentScheduleId, ensureDeploymentSchedule, type DeploymentSchedule } from './deployment-schedule';

const DAY_MS = 24 * 3_600_000;

/**
 * The deployment's key rotation schedule (docs/entitlement-tokens.md, "Rotating and withdrawing
 * keys"): once a day; the workflow rotates only a key that has signed for the rotation interval.
 */
const SIGNING_KEY_ROTATION: DeploymentSchedule = {
  name: 'signing-key-rotation',
  workflow: signingKeyRotationWorkflow,
  spec: { intervals: [{ every: DAY_MS }] },
  hasSpec: (d) => d.spec.intervals?.length === 1 && d.spec.intervals[0].every === DAY_MS,
  note: 'rotates the signing key of entitlement tokens and digests once it is due',
};

export const signingKeyScheduleId = (taskQueue: string) => deploymentScheduleId(SIGNING_KEY_ROTATION.name, taskQueue);

export const ensureSigningKeySchedule = (client: Client, taskQueue: string) =>
  ensureDeploymentSchedule(client, taskQueue, SIGNING_KEY_ROTATION);
