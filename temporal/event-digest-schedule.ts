import type { Client } from '@temporalio/client';
import { eventDigestsWorkflow } from '../workflows/event-digests';
import { deploymentScheduleId, ensureDeploymentSchedule, type DeploymentSchedule } from './deployment-schedule';

/**
 * The daily digest schedule (docs/event-proofs.md, "Daily digest"): each run makes every tenant's
 * digest of the day before, at 00:05 UTC; after an outage the missed day is still made (each run
 * names its own day).
 */
const EVENT_DIGESTS: DeploymentSchedule = {
  name: 'event-digests',
  workflow: eventDigestsWorkflow,
  spec: { cronExpressions: ['5 0 * * *'] },
  hasSpec: (d) =>
    (d.spec.calendars?.length ?? 0) === 1 &&
    d.spec.calendars?.[0].hour?.[0]?.start === 0 &&
    d.spec.calendars?.[0].minute?.[0]?.start === 5,
  note: 'signs each tenant’s digest of the day before',
};

export const eventDigestScheduleId = (taskQueue: string) => deploymentScheduleId(EVENT_DIGESTS.name, taskQueue);

export const ensureEventDigestSchedule = (client: Client, taskQueue: string) =>
  ensureDeploymentSchedule(client, taskQueue, EVENT_DIGESTS);
