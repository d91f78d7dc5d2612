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

// ── Sync: drift snapshots and sync runs, started by function reference.
import { driftSnapshotWorkflow, syncRunWorkflow, type SnapshotOutcome, type SyncRunInput } from '../workflows/sync-run';
import type { SyncTarget } from '../db/sync-facts';

export const syncWorkflowId = (kind: SyncRunInput['kind'], runId: string) => (kind === 'sync' ? `sync-${runId}` : `product-sync-${runId}`);

export async function readDriftSnapshots(client: Client, taskQueue: string, tenantId: string, readId: string, targets: SyncTarget[]): Promise<SnapshotOutcome[]> {
  return client.workflow.execute(driftSnapshotWorkflow, {
    taskQueue,
    workflowId: `drift-${tenantId}-${readId}`,
    args: [{ tenantId, targets }],
    typedSearchAttributes: [
      { key: TENANT_ATTR, value: tenantId },
      { key: KIND_ATTR, value: 'drift' },
    ],
  });
}

export async function startSyncRun(client: Client, taskQueue: string, input: SyncRunInput) {
  return client.workflow.start(syncRunWorkflow, {
    taskQueue,
    workflowId: syncWorkflowId(input.kind, input.runId),
    args: [input],
    typedSearchAttributes: [
      { key: TENANT_ATTR, value: input.tenantId },
      { key: KIND_ATTR, value: input.kind },
    ],
  });
}

// ── Customer lifecycles: one entity workflow per provider customer, fed by signal-with-start.
import { customerLifecycleWorkflow, lifecycleEventSignal, lifecycleEventsSignal, type LifecycleInput } from '../workflows/customer-lifecycle';
import type { LifecycleEvent } from '../domain/subscription';
import { PROVIDER_ATTR } from './search-attributes';

export const lifecycleWorkflowId = (provider: string, customerKey: string) => `customer-${provider}-${customerKey}`;

export async function signalLifecycle(client: Client, taskQueue: string, input: LifecycleInput, event: LifecycleEvent) {
  return client.workflow.signalWithStart(customerLifecycleWorkflow, {
    taskQueue,
    workflowId: lifecycleWorkflowId(input.provider, input.customerKey),
    args: [input],
    signal: lifecycleEventSignal,
    signalArgs: [event],
    typedSearchAttributes: [
      { key: TENANT_ATTR, value: input.tenantId },
      { key: PROVIDER_ATTR, value: input.provider },
      { key: KIND_ATTR, value: 'customer-lifecycle' },
    ],
  });
}

/** Several events of one customer in one signal-with-start (the webhook outbox's batches). */
export async function signalLifecycleBatch(client: Client, taskQueue: string, input: LifecycleInput, events: LifecycleEvent[]) {
  return client.workflow.signalWithStart(customerLifecycleWorkflow, {
    taskQueue,
    workflowId: lifecycleWorkflowId(input.provider, input.customerKey),
    args: [input],
    signal: lifecycleEventsSignal,
    signalArgs: [events],
    typedSearchAttributes: [
      { key: TENANT_ATTR, value: input.tenantId },
      { key: PROVIDER_ATTR, value: input.provider },
      { key: KIND_ATTR, value: 'customer-lifecycle' },
    ],
  });
}

// ── Product retirement.
import { retireProductWorkflow, type RetireResult } from '../workflows/retire-product';

export async function runRetirement(client: Client, taskQueue: string, input: { tenantId: string; productId: string; stores: SyncTarget[] }): Promise<RetireResult> {
  return client.workflow.execute(retireProductWorkflow, {
    taskQueue,
    workflowId: `retire-${input.productId}`,
    args: [input],
    typedSearchAttributes: [
      { key: TENANT_ATTR, value: input.tenantId },
      { key: KIND_ATTR, value: 'retire' },
    ],
  });
}

// ── Store purchases: registration (the SDK waits for it) and notifications, started by function reference.
import crypto from 'node:crypto';
import { registerStorePurchaseWorkflow, storeNotificationWorkflow, type RegisterStorePurchaseInput, type RegisterStorePurchaseResult, type StoreNotificationInput } from '../workflows/store-purchase';

const digest = (...parts: string[]) => crypto.createHash('sha256').update(parts.join('\n')).digest('hex').slice(0, 32);

/**
 * One id per (tenant, provider, what the device handed over): a repeat while a run is going
 * joins it, a repeat after re-runs it to the same rows. The token itself stays out of the id.
 */
export const storePurchaseWorkflowId = (tenantId: string, provider: string, token: string) => `store-purchase-${provider}-${digest(tenantId, provider, token)}`;

export async function registerStorePurchase(client: Client, taskQueue: string, input: RegisterStorePurchaseInput): Promise<RegisterStorePurchaseResult> {
  return client.workflow.execute(registerStorePurchaseWorkflow, {
    taskQueue,
    workflowId: storePurchaseWorkflowId(input.tenantId, input.provider, input.purchaseToken ?? input.signedTransaction ?? ''),
    workflowIdConflictPolicy: 'USE_EXISTING',
    args: [input],
    typedSearchAttributes: [
      { key: TENANT_ATTR, value: input.tenantId },
      { key: PROVIDER_ATTR, value: input.provider },
      { key: KIND_ATTR, value: 'store-purchase' },
    ],
  });
}

export const storeNotificationWorkflowId = (provider: string, eventId: string) => `store-notification-${provider}-${eventId}`;

/** Started once per notification id; a redelivery finds it started (or done) and adds nothing. */
export async function startStoreNotification(client: Client, taskQueue: string, input: StoreNotificationInput) {
  return client.workflow.start(storeNotificationWorkflow, {
    taskQueue,
    workflowId: storeNotificationWorkflowId(input.provider, input.eventId),
    workflowIdConflictPolicy: 'USE_EXISTING',
    args: [input],
    typedSearchAttributes: [
      { key: TENANT_ATTR, value: input.tenantId },
      { key: PROVIDER_ATTR, value: input.provider },
      { key: KIND_ATTR, value: 'store-notification' },
    ],
  });
}
