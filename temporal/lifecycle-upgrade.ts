import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import { deliveryKey, tenantsOfDeliveries } from '../db/delivery-tenants';
import type { LifecycleEvent } from '../domain/subscription';
import { lifecycleEventsQuery } from '../workflows/customer-lifecycle';
import { PROVIDER_ATTR, TENANT_ATTR } from './search-attributes';
import { lifecycleWorkflowId, signalLifecycleBatch } from './workflow-starts';

export interface UpgradeOutcome {
  moved: { from: string; to: string; events: number }[];
  skipped: SkippedWorkflow[];
}

export interface SkippedWorkflow {
  workflow_id: string;
  reason: string;
  /**
   * For a workflow whose events are not all provably its tenant's: the event ids by the tenant
   * whose delivery rows name them (its own tenant included), and those no delivery row names.
   */
  events_by_tenant?: Record<string, string[]>;
  events_without_delivery?: string[];
}

interface Legacy {
  workflowId: string;
  runId: string;
  tenantId: string;
  provider: string;
  customerKey: string;
  events: LifecycleEvent[];
}

/**
 * Customer workflows started before ids carried the tenant (`customer-<provider>-<customer>`)
 * still hold their customer's events, which the new workflow (`customer-<tenant>-<provider>-
 * <customer>`) needs to place a refund or a payment that names only the customer. This hands
 * each running one's events to its new workflow (emails dropped: the subscription rows keep
 * theirs) and then terminates it. Idempotent: the new workflow ignores events it holds.
 *
 * The old id was the flaw: two tenants' customers with the same provider id shared one
 * workflow, started by the first tenant's event, so it may hold another tenant's events. Its
 * tenant (the first starter's) is therefore not taken on trust: every event must have a delivery
 * row (`webhook_deliveries`, which has always named the tenant that received it) of that tenant
 * and of no other. A workflow with an event of another tenant, of several, or of none is left
 * running untouched and reported (`skipped`, with its event ids by tenant) for the operator to
 * resolve (docs/temporal.md, "Upgrading"): moving it would hand another tenant's events to this
 * one.
 */
export async function upgradeLegacyLifecycles(client: Client, db: Knex, taskQueue: string): Promise<UpgradeOutcome> {
  const out: UpgradeOutcome = { moved: [], skipped: [] };
  const legacy: Legacy[] = [];
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
    const events = await client.workflow.getHandle(wf.workflowId, wf.runId).query(lifecycleEventsQuery);
    legacy.push({ workflowId: wf.workflowId, runId: wf.runId, tenantId, provider, customerKey: wf.workflowId.slice(prefix.length), events });
  }

  // Every event of every old workflow against the delivery rows, in one read.
  const tenantsOf = await tenantsOfDeliveries(db, legacy.flatMap((l) => l.events.map((e) => ({ provider: l.provider, eventId: e.id }))));
  for (const l of legacy) {
    const byTenant: Record<string, string[]> = {};
    const without: string[] = [];
    for (const e of l.events) {
      const tenants = tenantsOf.get(deliveryKey(l.provider, e.id));
      if (!tenants) without.push(e.id);
      else for (const t of tenants) (byTenant[t] ??= []).push(e.id);
    }
    const others = Object.keys(byTenant).filter((t) => t !== l.tenantId);
    if (others.length || without.length) {
      const why = [
        others.length ? `${others.length === 1 ? 'another tenant' : `${others.length} other tenants`} received ${new Set(others.flatMap((t) => byTenant[t])).size} of its ${l.events.length} events` : '',
        without.length ? `${without.length} of its ${l.events.length} events ${without.length === 1 ? 'has' : 'have'} no delivery row to check` : '',
      ].filter(Boolean).join('; ');
      out.skipped.push({
        workflow_id: l.workflowId,
        reason: `mixed: ${why}; left running, nothing moved`,
        events_by_tenant: byTenant,
        ...(without.length ? { events_without_delivery: without } : {}),
      });
      continue;
    }
    const events: LifecycleEvent[] = l.events.map(({ email, ...e }) => ({ ...e, has_email: e.has_email || !!email }));
    const to = lifecycleWorkflowId(l.tenantId, l.provider, l.customerKey);
    await signalLifecycleBatch(client, taskQueue, { tenantId: l.tenantId, provider: l.provider, customerKey: l.customerKey }, events);
    await client.workflow.getHandle(l.workflowId, l.runId).terminate(`upgraded: its events now live in ${to}`);
    out.moved.push({ from: l.workflowId, to, events: events.length });
  }
  return out;
}
