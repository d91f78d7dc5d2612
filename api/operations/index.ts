import type { Operation } from './types';
import { getTenant } from './read-tenant';
import { getProduct, listProducts } from './read-products';
import { listProviders } from './read-providers';
import { listEntitlements, listSubscribers } from './read-subscribers';
import { getPaywall, listCoupons } from './read-catalogue-extras';
import { listAudit, listWebhooks } from './read-records';
import { listSyncEvents } from './read-sync-events';
import { getReadiness } from './readiness';
import { getSyncReport, runSync, syncProduct } from './sync';
import { createProductOp, setPricingOp, updateProductOp } from './catalogue-writes';
import { attachProvider, createApp, listApps } from './apps';
import { retireProduct } from './retire';
import { createEndpoint, deleteEndpointOp, getEndpoint, listEndpoints, rotateEndpointSecretOp, updateEndpointOp } from './webhook-endpoints';
import { listOutboundAttempts, listOutboundDeliveries, listOutboundEvents, replayFailedDeliveries, replayOutboundEvent } from './webhook-endpoints-log';

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

