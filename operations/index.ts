import type { Operation } from './types';
import { getTenant } from './tenant/get';
import { listProviders } from './providers/list';
import { listEntitlements, listSubscribers } from './subscribers/read';
import { getPaywall, listCoupons } from './catalogue-extras/read';
import { listAudit, listWebhooks } from './records/read';
import { listSyncEvents } from './sync-runs/events';
import { getReadiness } from './readiness/get';
import { getSyncReport, runSync, syncProduct } from './sync-runs/run';
import { attachProvider, createApp, listApps } from './apps/apps';
import { retireProduct } from './products/retire';
import { createEndpoint, deleteEndpointOp, getEndpoint, listEndpoints, rotateEndpointSecretOp, updateEndpointOp } from './webhook-endpoints/endpoints';
import { listOutboundAttempts, listOutboundDeliveries, listOutboundEvents, replayFailedDeliveries, replayOutboundEvent } from './webhook-endpoints/log';
import { createProductOp } from './products/create';
import { getProduct } from './products/get';
import { listProducts } from './products/list';
import { setPricingOp } from './products/set-pricing';
import { updateProductOp } from './products/update';

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
  // Tool-only operations (no REST route).
  listApps,
  createApp,
  attachProvider,
  createProductOp,
  updateProductOp,
  setPricingOp,
  retireProduct,
] as Operation[];

