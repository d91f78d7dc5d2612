import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { ParentClosePolicy, proxyActivities, startChild } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { ProbeTarget, ProofRecord } from '../activities/providers';
import { providerFailureOf, type ProviderErrorClass } from './activity-failure';
import { runAttributes } from './search-attributes';
import { voidedPurchasesWorkflow, voidedPurchasesWorkflowId } from './voided-purchases';
import { importRunWorkflow, importRunWorkflowId } from './import-run';

const { listProbeTargets, recordProofs, ensureReconciliationSchedules } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
});
const { probeProvider } = proxyActivities<Activities>({
  startToCloseTimeout: '20 seconds',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '5 seconds', maximumAttempts: 3 },
});

export interface ProbeOutcome extends ProbeTarget {
  reachable: boolean;
  error_class: ProviderErrorClass | null;
  reason: string | null;
}

/**
 * Try every connected provider (or the one connection named) in every mode it has a
 * credential for, in parallel, and record what that proves: a connection whose call succeeded
 * owns its account and from then on receives its events (docs/providers.md, "Proving an
 * account"), except psp_b/psp_c, whose accounts OAuth alone claims. Started right after a connection is created or its
 * credentials change, and by
 * the dashboard's Verify button.
 */
export async function probeProvidersWorkflow(input: {
  tenantId: string;
  connectionId?: string;
}): Promise<ProbeOutcome[]> {
  const targets = await listProbeTargets(input);
  const outcomes = await Promise.all(
    targets.map(async (target): Promise<ProbeOutcome> => {
      try {
        await probeProvider({ tenantId: input.tenantId, target });
        return { ...target, reachable: true, error_class: null, reason: null };
      } catch (err) {
        return { ...target, reachable: false, ...providerFailureOf(err) };
      }
    }),
  );
  const connectionIds = input.connectionId ? [input.connectionId] : [...new Set(targets.map((t) => t.connectionId))];
  const proofs = await recordProofs({
    tenantId: input.tenantId,
    connectionIds,
    results: outcomes.map((o) => ({
      connectionId: o.connectionId,
      mode: o.mode,
      reachable: o.reachable,
      reason: o.reason,
    })),
  });
  // A Play connection proven now gets its Voided Purchases sweep now, not at the next api start.
  const play = new Set(targets.filter((t) => t.provider === 'store_android').map((t) => t.connectionId));
  for (const p of proofs)
    if (p.proven && play.has(p.connectionId)) await startVoidedSweep(input.tenantId, p.connectionId);
  // A web provider's account proven for the first time: its existing subscribers come in by themselves.
  for (const p of proofs)
    if (p.importOnProof) await startImportOnProof(input.tenantId, p.connectionId, p.importOnProof);
  // A proven connection gets the tenant its reconciliation schedules now (docs/reconciliation.md, "Scheduled").
  if (proofs.some((p) => p.proven)) await ensureReconciliationSchedules({ tenantId: input.tenantId });
  return outcomes;
}

/**
 * The import outlives this short workflow (ABANDON), as the sweep does; the import row is made
 * once per connection by `recordProofs`, so a re-proof finds nothing to start, and a retried
 * proof finds the import it started already running.
 */
async function startImportOnProof(
  tenantId: string,
  connectionId: string,
  imp: NonNullable<ProofRecord['importOnProof']>,
): Promise<void> {
  try {
    await startChild(importRunWorkflow, {
      workflowId: importRunWorkflowId(tenantId, imp.importId),
      args: [
        {
          tenantId,
          importId: imp.importId,
          source: 'provider_api',
          provider: imp.provider,
          connections: { [imp.provider]: connectionId },
          modes: imp.modes,
        },
      ],
      parentClosePolicy: ParentClosePolicy.ABANDON,
      typedSearchAttributes: runAttributes('import', tenantId, imp.provider),
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}

/** The sweep outlives this short workflow (ABANDON); one already running is the one we want. */
async function startVoidedSweep(tenantId: string, connectionId: string): Promise<void> {
  try {
    await startChild(voidedPurchasesWorkflow, {
      workflowId: voidedPurchasesWorkflowId(tenantId, connectionId),
      args: [{ tenantId, connectionId }],
      parentClosePolicy: ParentClosePolicy.ABANDON,
      typedSearchAttributes: runAttributes('voided-purchases', tenantId, 'store_android'),
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}
