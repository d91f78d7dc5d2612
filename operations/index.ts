import type { Operation } from './types';
import { getTenant } from './tenant/get';
import { listProviders } from './providers/list';
import { listSyncEvents } from './sync/events';
import { getReadiness } from './readiness/get';
import { runSync } from './sync/run';
import { retireProduct } from './products/retire';
import { createProductOp } from './products/create';
import { getProduct } from './products/get';
import { listProducts } from './products/list';
import { setPricingOp } from './products/set-pricing';
import { updateProductOp } from './products/update';
import { attachProvider } from './providers/attach';
import { createApp } from './apps/create';
import { listApps } from './apps/list';
import { listAudit } from './audit/list';
import { listCoupons } from './coupons/list';
import { listEntitlements } from './entitlements/list';
import { listOutboundAttempts } from './outbound-deliveries/attempts';
import { listOutboundDeliveries } from './outbound-deliveries/list';
import { replayFailedDeliveries } from './outbound-deliveries/replay-failed';
import { listOutboundEvents } from './outbound-events/list';
import { replayOutboundEvent } from './outbound-events/replay';
import { getPaywall } from './paywall/get';
import { syncProduct } from './products/sync';
import { listSubscribers } from './subscribers/list';
import { getSyncReport } from './sync/report';
import { listWebhooks } from './webhooks/list';
import { createEndpoint } from './webhook-endpoints/create';
import { deleteEndpointOp } from './webhook-endpoints/delete';
import { getEndpoint } from './webhook-endpoints/get';
import { listEndpoints } from './webhook-endpoints/list';
import { rotateEndpointSecretOp } from './webhook-endpoints/rotate-secret';
import { updateEndpointOp } from './webhook-endpoints/update';
import { createApiKey } from './api-keys/create';
import { revokeApiKeyOp } from './api-keys/revoke';
import { publishPaywall } from './paywall/publish';
import { savePaywallDraft } from './paywall/save-draft';
import { connectProvider } from './providers/connect';
import { connectProviderOAuth } from './providers/connect-oauth';
import { setDefaultProvider } from './providers/set-default';
import { updateProviderCredentials } from './providers/update-credentials';
import { verifyProvider } from './providers/verify';
import { changeMemberRole } from './team/change-role';
import { inviteMember } from './team/invite';
import { removeTeamMember } from './team/remove';
import { revokeTeamInvitation } from './team/revoke-invitation';
import { createImportOp } from './imports/create';
import { getImport } from './imports/get';
import { listImports } from './imports/list';
import { getCustomer } from './customers/get';
import { grantEntitlement } from './grants/create';
import { revokeGrantOp } from './grants/revoke';
import { getChange } from './changes/get';
import { makeApproveChange, rejectChange } from './changes/approve';

/** Approval runs the held write by its name through this table (docs/approvals.md). */
export const approveChange = makeApproveChange((name) => OPERATIONS.find((op) => op.name === name && op.write));
import { getChart } from './charts/get';
import { listCharts } from './charts/list';
import { listExchangeRates } from './exchange-rates/list';
import { removeExchangeRate } from './exchange-rates/remove';
import { setExchangeRates } from './exchange-rates/set';
import { listReconciliations } from './reconciliations/list';
import { refreshCustomer } from './customers/refresh';
import { getReconciliationSettings } from './reconciliation-settings/get';
import { updateReconciliationSettings } from './reconciliation-settings/update';

/**
 * The operation table: every management operation, once, with the scope it demands. REST routes
 * are made from it; the tools that run these operations are listed in api/tools/tool-list.ts.
 */
export const OPERATIONS: Operation[] = [
  getTenant,
  getReadiness,
  listProducts,
  getProduct,
  syncProduct,
  listProviders,
  getSyncReport,
  runSync,
  listSyncEvents,
  listSubscribers,
  listEntitlements,
  listCoupons,
  getPaywall,
  listWebhooks,
  listAudit,
  // Charts (docs/charts.md).
  listCharts,
  getChart,
  listExchangeRates,
  setExchangeRates,
  removeExchangeRate,
  // Outbound webhooks to the tenant's backend (docs/outbound-webhooks.md).
  listEndpoints,
  getEndpoint,
  createEndpoint,
  updateEndpointOp,
  deleteEndpointOp,
  rotateEndpointSecretOp,
  listOutboundEvents,
  replayOutboundEvent,
  listOutboundDeliveries,
  listOutboundAttempts,
  replayFailedDeliveries,
  // Imports of existing subscribers (docs/reconciliation.md).
  createImportOp,
  getImport,
  listImports,
  // The support desk (docs/support.md).
  getCustomer,
  grantEntitlement,
  revokeGrantOp,
  // Writes held for a person's approval (docs/approvals.md): their status; approving and rejecting are a person's.
  getChange,
  // Reconciliation: repairs of what a lost notification got wrong (docs/reconciliation.md).
  refreshCustomer,
  listReconciliations,
  getReconciliationSettings,
  updateReconciliationSettings,
  // Tool-only operations (no REST route).
  listApps,
  createApp,
  attachProvider,
  updateProductOp,
  retireProduct,
  // Catalogue writes: tools, and REST routes for the CI client (docs/ci.md).
  createProductOp,
  setPricingOp,
  // Account operations: a signed-in person in the dashboard only (keys, paywall, credentials): no REST route, no tool.
  createApiKey,
  revokeApiKeyOp,
  savePaywallDraft,
  publishPaywall,
  connectProvider,
  connectProviderOAuth,
  updateProviderCredentials,
  setDefaultProvider,
  verifyProvider,
  // The team (docs/team.md): owners and admins only.
  inviteMember,
  revokeTeamInvitation,
  changeMemberRole,
  removeTeamMember,
  approveChange,
  rejectChange,
] as Operation[];
