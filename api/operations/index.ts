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

/** The operation table: every management operation, once. REST routes and tools are made from it. */
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
] as Operation[];

/**
 * The spec's endpoint → scope table, complete (some endpoints' operations arrive with later
 * issues). Tests hold the operation table to it.
 */
export const ENDPOINT_SCOPES: Record<string, string> = {
  'GET /tenant': 'tenant:read',
  'GET /readiness': 'readiness:read',
  'GET /products': 'products:read',
  'GET /products/{id}': 'products:read',
  'POST /products/{id}/sync': 'products:sync',
  'GET /providers': 'providers:read',
  'GET /sync': 'products:read',
  'POST /sync': 'products:sync',
  'GET /sync/events': 'products:read',
  'GET /subscribers': 'subscribers:read',
  'GET /entitlements': 'subscribers:read',
  'GET /coupons': 'coupons:read',
  'GET /paywall': 'paywall:read',
  'GET /webhooks': 'webhooks:read',
  'GET /audit': 'audit:read',
};
