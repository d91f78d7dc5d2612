import { ActivityFailure, ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { ProbeTarget } from '../activities/providers';

const { listProbeTargets } = proxyActivities<Activities>({ startToCloseTimeout: '30 seconds' });
const { probeProvider } = proxyActivities<Activities>({
  startToCloseTimeout: '20 seconds',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '5 seconds', maximumAttempts: 3 },
});

export interface ProbeOutcome extends ProbeTarget {
  reachable: boolean;
  error_class: 'unreachable' | 'rate_limited' | 'rejected' | null;
  reason: string | null;
}

/** Try every connected provider in every mode it has a credential for, in parallel. */
export async function probeProvidersWorkflow(input: { tenantId: string }): Promise<ProbeOutcome[]> {
  const targets = await listProbeTargets(input);
  return Promise.all(
    targets.map(async (target): Promise<ProbeOutcome> => {
      try {
        await probeProvider({ tenantId: input.tenantId, target });
        return { ...target, reachable: true, error_class: null, reason: null };
      } catch (err) {
        const cause = err instanceof ActivityFailure ? err.cause : err;
        const d = cause instanceof ApplicationFailure ? (cause.details?.[0] as { error_class?: ProbeOutcome['error_class']; reason?: string } | undefined) : undefined;
        return { ...target, reachable: false, error_class: d?.error_class ?? 'unreachable', reason: d?.reason ?? String((cause as Error)?.message ?? err) };
      }
    }),
  );
}
