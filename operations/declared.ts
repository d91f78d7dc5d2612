// Written by scripts/operations-table.ts from every `defineOperation` in operations/<resource>/; do not edit.
// `npm test` and `npm run build` rewrite it; `npm run checks` fails when it is stale.
import type { Operation } from './types';
import { createApiKey } from './api-keys/create';
import { listApiKeysOp } from './api-keys/list';
import { revokeApiKeyOp } from './api-keys/revoke';
import { createApp } from './apps/create';
import { listApps } from './apps/list';
import { connectAssistant } from './assistants/connect';
import { denyAssistant } from './assistants/deny';
import { disconnectMemberAssistant } from './assistants/disconnect';
import { listTeamAssistants } from './assistants/list-team';
import { listAssistants } from './assistants/list';
import { revokeAssistant } from './assistants/revoke';
import { exportAudit } from './audit/export';
import { listAudit } from './audit/list';
import { auditPeople } from './audit/people';
import { rejectChange } from './changes/approve';
import { getChange } from './changes/get';
import { listChanges } from './changes/list';
import { viewChange } from './changes/list';
import { getChart } from './charts/get';
import { listCharts } from './charts/list';
import { listCoupons } from './coupons/list';
import { createCustomerNote } from './customer-notes/create';
import { listCustomerNotes } from './customer-notes/list';
import { eraseCustomerOp } from './customers/erase';
import { customerEvents } from './customers/events';
import { findCustomers } from './customers/find';
import { getCustomer } from './customers/get';
import { mergeCustomers } from './customers/merge';
import { refreshCustomer } from './customers/refresh';
import { getDigest } from './digests/get';
import { listEntitlements } from './entitlements/list';
import { listExchangeRates } from './exchange-rates/list';
import { removeExchangeRate } from './exchange-rates/remove';
import { setExchangeRates } from './exchange-rates/set';
import { getExportDestination } from './export-destination/get';
import { saveExportDestination } from './export-destination/save';
import { createExportOp } from './exports/create';
import { downloadExportFile } from './exports/download';
import { getExportOp } from './exports/get';
import { grantEntitlement } from './grants/create';
import { revokeGrantOp } from './grants/revoke';
import { createImportOp } from './imports/create';
import { getImport } from './imports/get';
import { listImports } from './imports/list';
import { listOutboundAttempts } from './outbound-deliveries/attempts';
import { listOutboundDeliveries } from './outbound-deliveries/list';
import { recentOutboundAttempts } from './outbound-deliveries/recent-attempts';
import { replayFailedDeliveries } from './outbound-deliveries/replay-failed';
import { listOutboundEvents } from './outbound-events/list';
import { replayOutboundEvent } from './outbound-events/replay';
import { getOverview } from './overview/get';
import { getPaywallDraft } from './paywall/draft';
import { getPaywall } from './paywall/get';
import { publishPaywall } from './paywall/publish';
import { savePaywallDraft } from './paywall/save-draft';
import { createProductOp } from './products/create';
import { getProduct } from './products/get';
import { listProducts } from './products/list';
import { retireProduct } from './products/retire';
import { setPricingOp } from './products/set-pricing';
import { summarizeProducts } from './products/summaries';
import { syncProduct } from './products/sync';
import { updateProductOp } from './products/update';
import { attachProvider } from './providers/attach';
import { connectProviderOAuth } from './providers/connect-oauth';
import { connectProvider } from './providers/connect';
import { listConnections } from './providers/connections';
import { getConnection } from './providers/connections';
import { listProviders } from './providers/list';
import { setDefaultProvider } from './providers/set-default';
import { updateProviderCredentials } from './providers/update-credentials';
import { verifyProvider } from './providers/verify';
import { getReadiness } from './readiness/get';
import { getReconciliationSettings } from './reconciliation-settings/get';
import { updateReconciliationSettings } from './reconciliation-settings/update';
import { listReconciliations } from './reconciliations/list';
import { createRevenueCatKeyOp } from './revenuecat-keys/create';
import { listRevenueCatKeysOp } from './revenuecat-keys/list';
import { revokeRevenueCatKeyOp } from './revenuecat-keys/revoke';
import { listSubscribers } from './subscribers/list';
import { listSyncEvents } from './sync/events';
import { getSyncReport } from './sync/report';
import { runSync } from './sync/run';
import { listSyncRuns } from './sync/runs';
import { changeMemberRole } from './team/change-role';
import { inviteMember } from './team/invite';
import { listTeam } from './team/list';
import { removeTeamMember } from './team/remove';
import { revokeTeamInvitation } from './team/revoke-invitation';
import { getTenant } from './tenant/get';
import { getTransferSettings } from './transfer-settings/get';
import { updateTransferSettings } from './transfer-settings/update';
import { approveTransfer } from './transfers/approve';
import { getTransferOp } from './transfers/get';
import { listTransfers } from './transfers/list';
import { rejectTransfer } from './transfers/reject';
import { undoTransfer } from './transfers/undo';
import { createEndpoint } from './webhook-endpoints/create';
import { deleteEndpointOp } from './webhook-endpoints/delete';
import { getEndpoint } from './webhook-endpoints/get';
import { listEndpoints } from './webhook-endpoints/list';
import { rotateEndpointSecretOp } from './webhook-endpoints/rotate-secret';
import { updateEndpointOp } from './webhook-endpoints/update';
import { listWebhooks } from './webhooks/list';

/** The declared operations, by resource folder and file name. */
export const DECLARED: Operation[] = [
  createApiKey,
  listApiKeysOp,
  revokeApiKeyOp,
  createApp,
  listApps,
  connectAssistant,
  denyAssistant,
  disconnectMemberAssistant,
  listTeamAssistants,
  listAssistants,
  revokeAssistant,
  exportAudit,
  listAudit,
  auditPeople,
  rejectChange,
  getChange,
  listChanges,
  viewChange,
  getChart,
  listCharts,
  listCoupons,
  createCustomerNote,
  listCustomerNotes,
  eraseCustomerOp,
  customerEvents,
  findCustomers,
  getCustomer,
  mergeCustomers,
  refreshCustomer,
  getDigest,
  listEntitlements,
  listExchangeRates,
  removeExchangeRate,
  setExchangeRates,
  getExportDestination,
  saveExportDestination,
  createExportOp,
  downloadExportFile,
  getExportOp,
  grantEntitlement,
  revokeGrantOp,
  createImportOp,
  getImport,
  listImports,
  listOutboundAttempts,
  listOutboundDeliveries,
  recentOutboundAttempts,
  replayFailedDeliveries,
  listOutboundEvents,
  replayOutboundEvent,
  getOverview,
  getPaywallDraft,
  getPaywall,
  publishPaywall,
  savePaywallDraft,
  createProductOp,
  getProduct,
  listProducts,
  retireProduct,
  setPricingOp,
  summarizeProducts,
  syncProduct,
  updateProductOp,
  attachProvider,
  connectProviderOAuth,
  connectProvider,
  listConnections,
  getConnection,
  listProviders,
  setDefaultProvider,
  updateProviderCredentials,
  verifyProvider,
  getReadiness,
  getReconciliationSettings,
  updateReconciliationSettings,
  listReconciliations,
  createRevenueCatKeyOp,
  listRevenueCatKeysOp,
  revokeRevenueCatKeyOp,
  listSubscribers,
  listSyncEvents,
  getSyncReport,
  runSync,
  listSyncRuns,
  changeMemberRole,
  inviteMember,
  listTeam,
  removeTeamMember,
  revokeTeamInvitation,
  getTenant,
  getTransferSettings,
  updateTransferSettings,
  approveTransfer,
  getTransferOp,
  listTransfers,
  rejectTransfer,
  undoTransfer,
  createEndpoint,
  deleteEndpointOp,
  getEndpoint,
  listEndpoints,
  rotateEndpointSecretOp,
  updateEndpointOp,
  listWebhooks,
] as Operation[];
