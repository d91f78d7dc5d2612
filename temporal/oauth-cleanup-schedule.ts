import type { Client } from '@temporalio/client';
import { oauthCleanupWorkflow } from '../workflows/oauth-cleanup';
import { deploymentScheduleId, ensureDeploymentSchedule, type DeploymentSchedule } from './deployment-schedule';

const HOUR_MS = 3_600_000;

/**
 * The sign-in records' cleanup schedule (docs/assistant-sign-in.md, "Expired records"): hourly,
 * deleting what has expired in bounded batches. The deployment's, not a tenant's: the
 * authorization server's records are presented before any tenant is known and carry none.
 */
const OAUTH_CLEANUP: DeploymentSchedule = {
  name: 'oauth-cleanup',
  workflow: oauthCleanupWorkflow,
  spec: { intervals: [{ every: HOUR_MS }] },
  hasSpec: (d) => d.spec.intervals?.length === 1 && d.spec.intervals[0].every === HOUR_MS,
  note: 'deletes expired assistant sign-in codes, tokens and sessions, and unused client registrations, in bounded batches',
  catchupWindowMs: HOUR_MS,
};

export const oauthCleanupScheduleId = (taskQueue: string) => deploymentScheduleId(OAUTH_CLEANUP.name, taskQueue);

export const ensureOAuthCleanupSchedule = (client: Client, taskQueue: string) =>
  ensureDeploymentSchedule(client, taskQueue, OAUTH_CLEANUP);
