import type { Client } from '@temporalio/client';
import type { LifecycleEvent } from '../domain/subscription';
import { lifecycleEventsQuery } from '../workflows/customer-lifecycle';
import { PROVIDER_ATTR, TENANT_ATTR } from './search-attributes';
import { lifecycleWorkflowId, signalLifecycleBatch } from './workflow-starts';

export interface UpgradeOutcome {
  moved: { from: string; to: string; events: number }[];
  skipped: { workflow_id: string; reason: string }[];
}

/**
 * Customer workflows started before ids carried the tenant (`customer-<provider>-<customer>`)
 * still hold their customer's events, which the new workflow (`customer-<tenant>-<provider>-
 * <customer>`) needs to place a refund or a payment that names only the customer. This hands
 * each running one's events to its new workflow (emails dropped: the subscription rows keep
 * theirs) and then terminates it. Idempotent: the new workflow ignores events it holds.
 */
export async function upgradeLegacyLifecycles(client: Client, taskQueue: string): Promise<UpgradeOutcome> {
  const out: UpgradeOutcome = { moved: [], skipped: [] };
  const running = client.workflow.list({ query: `WorkflowType = 'customerLifecycleWorkflow' AND ExecutionStatus = 'Running'` });
  for await (const wf of running) {
    const tenantId = wf.typedSearchAttributes.get(TENANT_ATTR);
    const provider = wf.typedSearchAttributes.get(PROVIDER_ATTR);
    if (!tenantId || !provider) {
      out.skipped.push({ workflow_id: wf.workflowId, reason: 'no tenant or provider search attribute' });
      continue;
    }
    if (wf.workflowId.startsWith(`customer-${tenantId}-`)) continue; // already under the new id
    const prefix = `customer-${provider}-`;
    if (!wf.workflowId.startsWith(prefix)) {
      out.skipped.push({ workflow_id: wf.workflowId, reason: 'not a customer workflow id' });
      continue;
    }
    const customerKey = wf.workflowId.slice(prefix.length);
    const handle = client.workflow.getHandle(wf.workflowId, wf.runId);
    const held = await handle.query(lifecycleEventsQuery);
    const events: LifecycleEvent[] = held.map(({ email, ...e }) => ({ ...e, has_email: e.has_email || !!email }));
    const to = lifecycleWorkflowId(tenantId, provider, customerKey);
    await signalLifecycleBatch(client, taskQueue, { tenantId, provider, customerKey }, events);
    await handle.terminate(`upgraded: its events now live in ${to}`);
    out.moved.push({ from: wf.workflowId, to, events: events.length });
  }
  return out;
}
