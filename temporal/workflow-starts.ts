import type { Client } from '@temporalio/client';
import { KIND_ATTR, TENANT_ATTR } from './search-attributes';
import type { TrialInput } from '../workflows/subscription-trial';
import type { ProbeOutcome } from '../workflows/probe-providers';

/** Readable workflow ids, so operators find runs in the Temporal UI. */
export const trialWorkflowId = (subscriptionId: string) => `subscription-trial-${subscriptionId}`;

export async function startTrialTimer(client: Client, taskQueue: string, input: TrialInput) {
  return client.workflow.start('subscriptionTrialWorkflow', {
    taskQueue,
    workflowId: trialWorkflowId(input.subscriptionId),
    args: [input],
    typedSearchAttributes: [
      { key: TENANT_ATTR, value: input.tenantId },
      { key: KIND_ATTR, value: 'subscription-trial' },
    ],
  });
}

export async function runProviderProbe(client: Client, taskQueue: string, tenantId: string, probeId: string): Promise<ProbeOutcome[]> {
  return client.workflow.execute('probeProvidersWorkflow', {
    taskQueue,
    workflowId: `probe-providers-${tenantId}-${probeId}`,
    args: [{ tenantId }],
    typedSearchAttributes: [
      { key: TENANT_ATTR, value: tenantId },
      { key: KIND_ATTR, value: 'probe-providers' },
    ],
  });
}
