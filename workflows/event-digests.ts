import { continueAsNew, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { previousDay } from '../domain/event-digest';

const { tenantsDueADigest, makeEventDigest } = proxyActivities<Activities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute', maximumAttempts: 10 },
});

/** Tenants per page of the day's list; digests per run before continue-as-new. */
const PAGE = 100;
const PER_RUN = 500;

export interface EventDigestsInput {
  /** `YYYY-MM-DD`; absent (a scheduled run): the UTC day before the run started. */
  day?: string;
}

/**
 * One tick of the daily digest Schedule (`event-digests-<task queue>`, docs/event-proofs.md):
 * every tenant with events recorded on the day gets its signed digest, a page of tenants at a
 * time, one activity each (idempotent: a repeated tick or a retry makes nothing twice). Tenant ids
 * and roots only in the history.
 */
export async function eventDigestsWorkflow(input: EventDigestsInput = {}): Promise<{ day: string; made: number }> {
  const day = input.day ?? previousDay(Date.now());
  let made = 0;
  for (;;) {
    const due = await tenantsDueADigest({ day, max: PAGE });
    if (!due.length) return { day, made };
    for (const tenantId of due) {
      await makeEventDigest({ tenantId, day });
      made++;
    }
    if (made >= PER_RUN || workflowInfo().continueAsNewSuggested)
      await continueAsNew<typeof eventDigestsWorkflow>({ day });
  }
}
