import crypto from 'node:crypto';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Knex } from 'knex';
import type { SyncTarget } from '../db/sync-facts';
import { playConnectionsOfAllTenants } from '../db/voided-sweep-targets';
import type { LifecycleEvent } from '../domain/subscription';
import {
  customerLifecycleWorkflow,
  lifecycleHandoverSignal,
  type LifecycleInput,
} from '../workflows/customer-lifecycle';
import { probeProvidersWorkflow, type ProbeOutcome } from '../workflows/probe-providers';
import {
  appReceiptPurchasesWorkflow,
  type AppReceiptPurchasesInput,
  type AppReceiptPurchasesResult,
} from '../workflows/app-receipt';
import { retireProductWorkflow, type RetireResult } from '../workflows/retire-product';
import {
  registerStorePurchaseWorkflow,
  storeNotificationWorkflow,
  type RegisterStorePurchaseInput,
  type RegisterStorePurchaseResult,
  type StoreNotificationInput,
} from '../workflows/store-purchase';
import { voidedPurchasesWorkflow, voidedPurchasesWorkflowId } from '../workflows/voided-purchases';
import {
  driftSnapshotWorkflow,
  gateUpdate,
  syncRunWorkflow,
  type GateAnswer,
  type SnapshotOutcome,
  type SyncRunInput,
} from '../workflows/sync-run';
import { importRunWorkflow, importRunWorkflowId, type ImportRunInput } from '../workflows/import-run';
import { exportRunWorkflow, exportRunWorkflowId, type ExportRunInput } from '../workflows/export-run';
import { customerRefreshWorkflow, type CustomerRefreshInput } from '../workflows/customer-refresh';
import { outboundDeliveryWorkflow, outboundWakeSignal, type OutboundInput } from '../workflows/outbound-delivery';
import { runAttributes } from '../workflows/search-attributes';
import { grantExpiryWorkflow, grantRevokedSignal, type GrantExpiryInput } from '../workflows/grant-expiry';
import { changeApprovalWorkflow, changeDecidedSignal, type ChangeApprovalInput } from '../workflows/change-approval';
import { changeWorkflowId } from '../domain/changes';
import { transferWorkflowId } from '../domain/transfers';
import {
  transferChangedSignal,
  transferWorkflow,
  type TransferChange,
  type TransferInput,
} from '../workflows/transfer';

/**
 * Every workflow the service starts, by function reference, with a readable id and the
 * search attributes (tenant, kind, and provider where there is one) operators filter on in the
 * Temporal UI (docs/operations.md).
 */

// ── Provider probes.
export async function runProviderProbe(
  client: Client,
  taskQueue: string,
  tenantId: string,
  probeId: string,
): Promise<ProbeOutcome[]> {
  return client.workflow.execute(probeProvidersWorkflow, {
    taskQueue,
    workflowId: `probe-providers-${tenantId}-${probeId}`,
    args: [{ tenantId }],
    typedSearchAttributes: runAttributes('probe-providers', tenantId),
  });
}

/**
 * Prove one connection's account (docs/providers.md, "Proving an account"): started when a
 * connection is created or its credentials change, and by the dashboard's Verify button, which
 * waits for the handle's result. The workflow records the proof itself.
 */
export async function startConnectionProof(
  client: Client,
  taskQueue: string,
  tenantId: string,
  connectionId: string,
  proofId: string,
) {
  return client.workflow.start(probeProvidersWorkflow, {
    taskQueue,
    workflowId: `probe-connection-${tenantId}-${connectionId}-${proofId}`,
    args: [{ tenantId, connectionId }],
    typedSearchAttributes: runAttributes('probe-providers', tenantId),
  });
}

// ── Sync: drift snapshots and sync runs.
export const syncWorkflowId = (kind: SyncRunInput['kind'], tenantId: string, runId: string) =>
  kind === 'sync' ? `sync-${tenantId}-${runId}` : `product-sync-${tenantId}-${runId}`;

export async function readDriftSnapshots(
  client: Client,
  taskQueue: string,
  tenantId: string,
  readId: string,
  targets: SyncTarget[],
): Promise<SnapshotOutcome[]> {
  return client.workflow.execute(driftSnapshotWorkflow, {
    taskQueue,
    workflowId: `drift-${tenantId}-${readId}`,
    args: [{ tenantId, targets }],
    typedSearchAttributes: runAttributes('drift', tenantId),
  });
}

export async function startSyncRun(client: Client, taskQueue: string, input: SyncRunInput) {
  return client.workflow.start(syncRunWorkflow, {
    taskQueue,
    workflowId: syncWorkflowId(input.kind, input.tenantId, input.runId),
    args: [input],
    typedSearchAttributes: runAttributes(input.kind, input.tenantId),
  });
}

/** The run's gate answer (accepted, or the refusal it ends with), as soon as the workflow knows it. */
export function syncGateOf(handle: Awaited<ReturnType<typeof startSyncRun>>): Promise<GateAnswer> {
  return handle.executeUpdate(gateUpdate);
}

// ── Customer lifecycles: one entity workflow per tenant's provider customer, fed by signal-with-start.
// Provider customer ids are not unique across tenants (and a tenant signs whatever ids it likes),
// so the tenant is part of the identity.
export const lifecycleWorkflowId = (tenantId: string, provider: string, customerKey: string) =>
  `customer-${tenantId}-${provider}-${customerKey}`;

/** The events of one customer in one signal-with-start (the webhook outbox hands them over in batches). */
export async function signalLifecycleBatch(
  client: Client,
  taskQueue: string,
  input: LifecycleInput,
  events: LifecycleEvent[],
) {
  return client.workflow.signalWithStart(customerLifecycleWorkflow, {
    taskQueue,
    workflowId: lifecycleWorkflowId(input.tenantId, input.provider, input.customerKey),
    args: [input],
    signal: lifecycleHandoverSignal,
    signalArgs: [{ tenantId: input.tenantId, events }],
    typedSearchAttributes: runAttributes('customer-lifecycle', input.tenantId, input.provider),
  });
}

// ── Product retirement.
export async function runRetirement(
  client: Client,
  taskQueue: string,
  input: { tenantId: string; productId: string; stores: SyncTarget[] },
): Promise<RetireResult> {
  return client.workflow.execute(retireProductWorkflow, {
    taskQueue,
    workflowId: `retire-${input.tenantId}-${input.productId}`,
    args: [input],
    typedSearchAttributes: runAttributes('retire', input.tenantId),
  });
}

// ── Store purchases: registration (the SDK waits for it) and notifications.
const digest = (...parts: string[]) => crypto.createHash('sha256').update(parts.join('\n')).digest('hex').slice(0, 32);

/**
 * One id per (tenant, provider, what the device handed over): a repeat while a run is going
 * joins it, a repeat after re-runs it to the same rows. The token itself stays out of the id.
 */
export const storePurchaseWorkflowId = (tenantId: string, provider: string, handedOver: string) =>
  `store-purchase-${tenantId}-${provider}-${digest(tenantId, provider, handedOver)}`;

export async function registerStorePurchase(
  client: Client,
  taskQueue: string,
  input: RegisterStorePurchaseInput,
): Promise<RegisterStorePurchaseResult> {
  return client.workflow.execute(registerStorePurchaseWorkflow, {
    taskQueue,
    workflowId: storePurchaseWorkflowId(
      input.tenantId,
      input.provider,
      input.purchase?.key ??
        input.signedTransaction ??
        (input.transactionId === undefined ? '' : `transaction:${input.transactionId}`),
    ),
    workflowIdConflictPolicy: 'USE_EXISTING',
    args: [input],
    typedSearchAttributes: runAttributes('store-purchase', input.tenantId, input.provider),
  });
}

/** One id per (tenant, receipt transaction): a repeat while a read is going joins it. */
export const appReceiptWorkflowId = (tenantId: string, transactionId: string) =>
  `app-receipt-${tenantId}-${digest(tenantId, 'store_ios', transactionId)}`;

export async function readAppReceiptPurchases(
  client: Client,
  taskQueue: string,
  input: AppReceiptPurchasesInput,
): Promise<AppReceiptPurchasesResult> {
  return client.workflow.execute(appReceiptPurchasesWorkflow, {
    taskQueue,
    workflowId: appReceiptWorkflowId(input.tenantId, input.transactionId),
    workflowIdConflictPolicy: 'USE_EXISTING',
    args: [input],
    typedSearchAttributes: runAttributes('app-receipt', input.tenantId, 'store_ios'),
  });
}

export const storeNotificationWorkflowId = (tenantId: string, provider: string, eventId: string) =>
  `store-notification-${tenantId}-${provider}-${eventId}`;

/** Started once per notification id; a redelivery finds it started (or done) and adds nothing. */
export async function startStoreNotification(client: Client, taskQueue: string, input: StoreNotificationInput) {
  return client.workflow.start(storeNotificationWorkflow, {
    taskQueue,
    workflowId: storeNotificationWorkflowId(input.tenantId, input.provider, input.eventId),
    workflowIdConflictPolicy: 'USE_EXISTING',
    args: [input],
    typedSearchAttributes: runAttributes('store-notification', input.tenantId, input.provider),
  });
}

/** One Voided Purchases API sweep per Play connection; starting it again finds it running. */
export async function startVoidedPurchaseSweep(
  client: Client,
  taskQueue: string,
  tenantId: string,
  connectionId: string,
) {
  return client.workflow.start(voidedPurchasesWorkflow, {
    taskQueue,
    workflowId: voidedPurchasesWorkflowId(tenantId, connectionId),
    workflowIdConflictPolicy: 'USE_EXISTING',
    args: [{ tenantId, connectionId }],
    typedSearchAttributes: runAttributes('voided-purchases', tenantId, 'store_android'),
  });
}

/** Started with the api process: a sweep for every Play connection there is (each start is idempotent). */
export async function startVoidedPurchaseSweeps(client: Client, taskQueue: string, db: Knex): Promise<number> {
  const targets = await playConnectionsOfAllTenants(db);
  for (const t of targets) await startVoidedPurchaseSweep(client, taskQueue, t.tenantId, t.connectionId);
  return targets.length;
}
// ── Outbound webhooks: one entity workflow per tenant and endpoint, woken by signal-with-start.
export const outboundWorkflowId = (tenantId: string, endpointId: string) => `outbound-${tenantId}-${endpointId}`;

/** Wake the endpoint's drain (the outbound outbox calls this once per endpoint and pass). */
export async function wakeOutboundEndpoint(client: Client, taskQueue: string, input: OutboundInput) {
  return client.workflow.signalWithStart(outboundDeliveryWorkflow, {
    taskQueue,
    workflowId: outboundWorkflowId(input.tenantId, input.endpointId),
    args: [input],
    signal: outboundWakeSignal,
    signalArgs: [{ tenantId: input.tenantId }],
    typedSearchAttributes: runAttributes('outbound-webhook', input.tenantId),
  });
}

// ── Imports: one workflow per (tenant, import), paging through a provider or an uploaded file.
export const importWorkflowId = importRunWorkflowId;

export async function startImportRun(client: Client, taskQueue: string, input: ImportRunInput) {
  return client.workflow.start(importRunWorkflow, {
    taskQueue,
    workflowId: importWorkflowId(input.tenantId, input.importId),
    workflowIdConflictPolicy: 'USE_EXISTING',
    args: [input],
    typedSearchAttributes: runAttributes('import', input.tenantId, input.provider),
  });
}

// ── Exports: one workflow per (tenant, export), one file per table (docs/exports.md).
export { exportRunWorkflowId };

export async function startExportRun(client: Client, taskQueue: string, input: ExportRunInput) {
  return client.workflow.start(exportRunWorkflow, {
    taskQueue,
    workflowId: exportRunWorkflowId(input.tenantId, input.exportId),
    workflowIdConflictPolicy: 'USE_EXISTING',
    args: [input],
    typedSearchAttributes: runAttributes('export', input.tenantId),
  });
}

// ── Grants by hand: one durable timer per grant (docs/support.md).
export const grantWorkflowId = (tenantId: string, grantId: string) => `grant-${tenantId}-${grantId}`;

/** Start a grant's timer; a repeat for the same grant joins the one running. */
export async function startGrantExpiry(client: Client, taskQueue: string, input: GrantExpiryInput) {
  return client.workflow.start(grantExpiryWorkflow, {
    taskQueue,
    workflowId: grantWorkflowId(input.tenantId, input.grantId),
    workflowIdConflictPolicy: 'USE_EXISTING',
    args: [input],
    typedSearchAttributes: runAttributes('grant', input.tenantId),
  });
}

/**
 * A revoked grant's timer is told to stop. Best effort: a timer already gone (finished, or never
 * reached) has nothing to stop, and one that still fires finds the grant ended and leaves it.
 */
export async function stopGrantExpiry(client: Client, tenantId: string, grantId: string): Promise<void> {
  try {
    await client.workflow.getHandle(grantWorkflowId(tenantId, grantId)).signal(grantRevokedSignal, { tenantId });
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
  }
}

// ── Writes held for a person's approval (docs/approvals.md): ids only in the input.
export async function startChangeApproval(client: Client, taskQueue: string, input: ChangeApprovalInput) {
  return client.workflow.start(changeApprovalWorkflow, {
    taskQueue,
    workflowId: changeWorkflowId(input.tenantId, input.changeId),
    args: [input],
    typedSearchAttributes: runAttributes('change-approval', input.tenantId),
  });
}

/** Tells a held change's workflow that a person decided (the outcome is already recorded). */
export async function signalChangeDecided(client: Client, tenantId: string, changeId: string, status: string) {
  await client.workflow
    .getHandle(changeWorkflowId(tenantId, changeId))
    .signal(changeDecidedSignal, { tenantId, status });
}

// ── Reconciliation: one customer's on-demand refresh, answered when it ends.
export const refreshWorkflowId = (tenantId: string, runId: string) => `refresh-${tenantId}-${runId}`;

export async function runCustomerRefresh(client: Client, taskQueue: string, input: CustomerRefreshInput) {
  return client.workflow.execute(customerRefreshWorkflow, {
    taskQueue,
    workflowId: refreshWorkflowId(input.tenantId, input.runId),
    args: [input],
    workflowExecutionTimeout: '5 minutes',
    typedSearchAttributes: runAttributes('reconciliation', input.tenantId),
  });
}

// ── Transfers: one workflow per transfer, its decision and its undo window (docs/transfers.md).
/**
 * Tell a transfer's workflow what its operation did, once committed; started if it is not running
 * (a registration that never reached its start, or a window already over: it then ends at once).
 */
export async function tellTransfer(
  client: Client,
  taskQueue: string,
  input: TransferInput & { provider: string },
  change: TransferChange,
): Promise<void> {
  const { provider, ...args } = input;
  await client.workflow.signalWithStart(transferWorkflow, {
    taskQueue,
    workflowId: transferWorkflowId(input.tenantId, input.transferId),
    args: [args],
    signal: transferChangedSignal,
    signalArgs: [change],
    typedSearchAttributes: runAttributes('transfer', input.tenantId, provider),
  });
}
