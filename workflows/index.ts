// Every workflow the worker registers. Deterministic code only: no db, no providers, no I/O.
export { probeProvidersWorkflow } from './probe-providers';
export { driftSnapshotWorkflow, syncRunWorkflow } from './sync-run';
export { customerLifecycleWorkflow } from './customer-lifecycle';
export { retireProductWorkflow } from './retire-product';
export { registerStorePurchaseWorkflow, storeNotificationWorkflow } from './store-purchase';
export { voidedPurchasesWorkflow } from './voided-purchases';
export { outboundDeliveryWorkflow } from './outbound-delivery';
export { importRunWorkflow } from './import-run';
export { grantExpiryWorkflow } from './grant-expiry';
export { transferWorkflow } from './transfer';
export { changeApprovalWorkflow } from './change-approval';
export { customerRefreshWorkflow } from './customer-refresh';
export { reconciliationRunWorkflow } from './reconciliation-run';
export { exportRunWorkflow } from './export-run';
export { signingKeyRotationWorkflow } from './signing-key-rotation';
export { eventDigestsWorkflow } from './event-digests';
export { oauthCleanupWorkflow } from './oauth-cleanup';
export { scheduledExportsWorkflow, tenantScheduledExportWorkflow } from './scheduled-exports';
