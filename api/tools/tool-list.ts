import type { Operation } from '../../operations/types';
import { getTenant } from '../../operations/tenant/get';
import { getReadiness } from '../../operations/readiness/get';
import { runSync } from '../../operations/sync/run';
import { listProviders } from '../../operations/providers/list';
import { listSyncEvents } from '../../operations/sync/events';
import { retireProduct } from '../../operations/products/retire';
import { createProductOp } from '../../operations/products/create';
import { getProduct } from '../../operations/products/get';
import { listProducts } from '../../operations/products/list';
import { setPricingOp } from '../../operations/products/set-pricing';
import { updateProductOp } from '../../operations/products/update';
import { attachProvider } from '../../operations/providers/attach';
import { createApp } from '../../operations/apps/create';
import { listApps } from '../../operations/apps/list';
import { listAudit } from '../../operations/audit/list';
import { listCoupons } from '../../operations/coupons/list';
import { listEntitlements } from '../../operations/entitlements/list';
import { listOutboundDeliveries } from '../../operations/outbound-deliveries/list';
import { replayFailedDeliveries } from '../../operations/outbound-deliveries/replay-failed';
import { replayOutboundEvent } from '../../operations/outbound-events/replay';
import { getPaywall } from '../../operations/paywall/get';
import { syncProduct } from '../../operations/products/sync';
import { listSubscribers } from '../../operations/subscribers/list';
import { listReconciliations } from '../../operations/reconciliations/list';
import { refreshCustomer } from '../../operations/customers/refresh';
import { getReconciliationSettings } from '../../operations/reconciliation-settings/get';
import { updateReconciliationSettings } from '../../operations/reconciliation-settings/update';
import { getSyncReport } from '../../operations/sync/report';
import { listWebhooks } from '../../operations/webhooks/list';
import { deleteEndpointOp } from '../../operations/webhook-endpoints/delete';
import { listEndpoints } from '../../operations/webhook-endpoints/list';
import { rotateEndpointSecretOp } from '../../operations/webhook-endpoints/rotate-secret';
import { updateEndpointOp } from '../../operations/webhook-endpoints/update';
import { createEndpoint } from '../../operations/webhook-endpoints/create';
import { createImportOp } from '../../operations/imports/create';
import { getImport } from '../../operations/imports/get';
import { listImports } from '../../operations/imports/list';
import { getCustomer } from '../../operations/customers/get';
import { grantEntitlement } from '../../operations/grants/create';
import { revokeGrantOp } from '../../operations/grants/revoke';
import { getChange } from '../../operations/changes/get';
import { getChart } from '../../operations/charts/get';
import { CHARTS } from '../../domain/charts/definitions';

/** The MCP tool annotations, stated per tool (never derived), so each one is a reviewed claim. */
export interface ToolAnnotations {
  /** Changes nothing anywhere. Equals "the operation is not a write" (the tool tests hold it so). */
  readOnlyHint: boolean;
  /** May remove or stop something a person would miss (sales at a store, objects at a provider). */
  destructiveHint: boolean;
  /** Calling it again with the same arguments changes nothing more. */
  idempotentHint: boolean;
  /** Reaches outside this service: it calls a payment provider or a store, live or test. */
  openWorldHint: boolean;
}

export interface ToolEntry {
  name: `billing_${string}`;
  /** The operation the tool runs: the same scope check, validation, handler and audit as REST. */
  operation: Operation;
  title: string;
  description: string;
  /** The tool names a product by `product_id` or `sku`; the operation itself takes its `id`. */
  namesProduct?: true;
  annotations: ToolAnnotations;
}

/**
 * Every tool the tool server offers, in `tools/list` order: this table is the one source of the
 * tool names, descriptions and annotations. openWorldHint is true exactly where the call goes out
 * to a provider or a store; the reason is on each such row. Everything else answers from this
 * service's own database.
 */
export const TOOL_LIST: readonly ToolEntry[] = [
  {
    name: 'billing_tenant',
    operation: getTenant,
    title: 'Tenant',
    description: 'Plan, limits and the scopes of the key you are using.',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  {
    name: 'billing_readiness',
    operation: getReadiness,
    title: 'Readiness',
    description:
      'Readiness per provider and mode. Relay manual_steps to the person verbatim; they need a device and are never done by you.',
    // Built from stored facts (connections, recorded store evidence); no provider is asked.
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  {
    name: 'billing_products',
    operation: listProducts,
    title: 'Products',
    description: 'List the product catalogue (filters: sku, type; paged).',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  {
    name: 'billing_product',
    operation: getProduct,
    title: 'Product',
    description: 'One product with its pricing rows. Takes `id`.',
    namesProduct: true,
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  {
    name: 'billing_sync_product',
    operation: syncProduct,
    title: 'Sync Product',
    description:
      'Sync one product to its providers (the only onboarding step that writes to a live provider). Read every verdict: a 200 can hold failures.',
    namesProduct: true,
    // Creates and updates the product's objects at every connected provider.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  },
  {
    name: 'billing_providers',
    operation: listProviders,
    title: 'Providers',
    description: 'Connected providers and their payment links (filter: provider; paged).',
    // The stored connections and links; no provider is asked.
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  {
    name: 'billing_sync_report',
    operation: getSyncReport,
    title: 'Sync Report',
    description: 'Drift report. Read confirm_count here and pass it to billing_sync_run.',
    // Reads every connected provider's current objects to compare them with the catalogue
    // (and answers 503 when one does not answer): read-only, but not a closed world.
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  },
  {
    name: 'billing_sync_run',
    operation: runSync,
    title: 'Sync Run',
    description: 'Run the sync drain. Needs confirm_count from billing_sync_report; writes to live providers.',
    // Writes products, prices, payment links and plans at every provider, in every mode.
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  },
  {
    name: 'billing_import',
    operation: createImportOp,
    title: 'Import',
    description:
      "Bring a provider's existing subscribers in: provider psp_a|psp_b|psp_c reads its list API; store_android|store_ios take csv (purchase_token,app_user_id | original_transaction_id,app_user_id); format revenuecat takes a RevenueCat transactions export. Follow it with billing_import_status.",
    // Reads the provider's or store's API; writes subscriptions and entitlements here only; a re-run changes nothing.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  },
  {
    name: 'billing_import_status',
    operation: getImport,
    title: 'Import Status',
    description:
      'One import: running, succeeded or failed; how many subscriptions it imported; refused lines with the reason.',
    // What the import recorded here; no provider is asked.
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  {
    name: 'billing_imports',
    operation: listImports,
    title: 'Imports',
    description:
      'Imports, newest first: provider, status, trigger (request, or connection_proven: started when a connection proved its account), imported and refused counts (filters: provider, trigger; paged).',
    // What the imports recorded here; no provider is asked.
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  {
    name: 'billing_customer_refresh',
    operation: refreshCustomer,
    title: 'Customer Refresh',
    description:
      'Re-read every provider for one customer (app_user_id) and apply what differs from what is held: answers what differed and what was applied (empty repairs: nothing differed). For support, when a purchase did not unlock.',
    // Reads the providers; writes subscriptions and entitlements here only; a second refresh changes nothing.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  },
  {
    name: 'billing_reconciliations',
    operation: listReconciliations,
    title: 'Reconciliations',
    description: 'Repairs: what differed from the provider and what was applied (filters: run_id, provider; paged).',
    // What the repairs recorded here; no provider is asked.
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  {
    name: 'billing_reconciliation_settings',
    operation: getReconciliationSettings,
    title: 'Reconciliation Settings',
    description:
      'How often the scheduled reconciliation compares provider state with what is held: enabled, web_interval_minutes (psp_a, psp_b, psp_c; default 60), stores_interval_minutes (stores; default 1440).',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  {
    name: 'billing_reconciliation_settings_update',
    operation: updateReconciliationSettings,
    title: 'Reconciliation Settings Update',
    description:
      'Change the scheduled reconciliation: web_interval_minutes (15–1440), stores_interval_minutes (60–10080), enabled (false pauses the runs). The schedules follow at once.',
    // Writes the setting and this service's own schedules; no provider is asked; the same body twice changes nothing.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  {
    name: 'billing_sync_events',
    operation: listSyncEvents,
    title: 'Sync Events',
    description:
      'Per-provider events of a sync run: pass run_id from billing_sync_run (filters: run_id, provider, status; paged).',
    // What a run recorded here; no provider is asked.
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  {
    name: 'billing_subscribers',
    operation: listSubscribers,
    title: 'Subscribers',
    description:
      'Subscription records (filters: email, status, provider, mode; paged). Pass mode=live for live questions.',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  {
    name: 'billing_entitlements',
    operation: listEntitlements,
    title: 'Entitlements',
    description: 'Entitlement state per app user (filters: app_user_id, provider, state; paged).',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  {
    name: 'billing_coupons',
    operation: listCoupons,
    title: 'Coupons',
    description: 'Discount codes with their counterparts at each provider (filter: code; paged).',
    // The stored counterparts; no provider is asked.
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  {
    name: 'billing_paywall',
    operation: getPaywall,
    title: 'Paywall',
    description: 'The paywall configuration the SDK renders.',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  {
    name: 'billing_webhooks',
    operation: listWebhooks,
    title: 'Webhooks',
    description: 'Inbound webhook deliveries (filters: provider, status, event_type, mode; paged).',
    // Deliveries already received and stored; no provider is asked.
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  {
    name: 'billing_audit',
    operation: listAudit,
    title: 'Audit',
    description: 'Audit trail (filters: action, actor_type; paged).',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  {
    name: 'billing_change_status',
    operation: getChange,
    title: 'Change Status',
    description:
      'A write held for a person’s approval (pass the id a held write answered): pending_approval, applied, rejected, expired or stale, and its outcome.',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  {
    name: 'billing_chart',
    operation: getChart,
    title: 'Chart',
    description: `One business chart over time, e.g. "what was MRR last quarter": name (${CHARTS.map((c) => c.name).join(', ')}), from/to (YYYY-MM-DD), resolution (day, week, month), mode, provider, product, country. Money is per currency in minor units; never add two currencies.`,
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  {
    name: 'billing_apps',
    operation: listApps,
    title: 'Apps',
    description: 'List the apps this key reaches, with their publishable keys. The first call of an onboarding.',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  {
    name: 'billing_create_app',
    operation: createApp,
    title: 'Create App',
    description:
      'Create an app (by name) and get its publishable key. Re-running with the same name returns the same app with created: false.',
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  {
    name: 'billing_attach_provider',
    operation: attachProvider,
    title: 'Attach Provider',
    description:
      'Attach a provider the account already connected (once per provider). Takes account_id, never a secret; omitted, the default connection is used; several and no default → refused with the candidates.',
    // Links a stored connection to an app; the provider is not contacted.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  {
    name: 'billing_create_product',
    operation: createProductOp,
    title: 'Create Product',
    description:
      'Add a product (once per tier). Not on sale until billing_sync_product; answers synced: false. A duplicate SKU is refused unless upsert: true.',
    // Catalogue only: nothing reaches a provider until billing_sync_product.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  },
  {
    name: 'billing_update_product',
    operation: updateProductOp,
    title: 'Update Product',
    description:
      'Change only the fields you name; trial_per_platform: null clears it. The product needs a sync afterwards (synced: false).',
    // Catalogue only, as above.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  {
    name: 'billing_set_product_pricing',
    operation: setPricingOp,
    title: 'Set Product Pricing',
    description:
      'Upsert prices per country and currency (amount in minor units). Does not reach any provider: run billing_sync_product next.',
    // Catalogue only, as above.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  {
    name: 'billing_retire_product',
    operation: retireProduct,
    title: 'Retire Product',
    description:
      'Retire a product: stops sales at the live stores first, then deactivates it. If a store refuses, the product stays active and the result says why.',
    // Stops sales at each live store (a workflow calls the stores) before deactivating here.
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
  },
  // Outbound webhooks to the tenant's own backend (docs/outbound-webhooks.md).
  {
    name: 'billing_webhook_endpoints',
    operation: listEndpoints,
    title: 'Webhook Endpoints',
    description:
      'Where this tenant’s events are pushed: URL, event types, enabled and why not. Secrets are never listed.',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  {
    name: 'billing_create_webhook_endpoint',
    operation: createEndpoint,
    title: 'Create Webhook Endpoint',
    description:
      'Add an endpoint (url, optional event_types; empty: all). The answer holds its signing secret once: hand it to the person to store, do not repeat it elsewhere.',
    // Saved here; deliveries to it start with the next event, from the worker.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  },
  {
    name: 'billing_update_webhook_endpoint',
    operation: updateEndpointOp,
    title: 'Update Webhook Endpoint',
    description:
      'Change an endpoint’s url, event_types, description or enabled. Disabling stops its deliveries; enabling clears the reason.',
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  {
    name: 'billing_delete_webhook_endpoint',
    operation: deleteEndpointOp,
    title: 'Delete Webhook Endpoint',
    description: 'Remove an endpoint with its delivery log.',
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  },
  {
    name: 'billing_rotate_webhook_secret',
    operation: rotateEndpointSecretOp,
    title: 'Rotate Webhook Secret',
    description:
      'New signing secret (shown once); the old one keeps signing for overlap_seconds (default one day) so the receiver can switch.',
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  },
  {
    name: 'billing_webhook_deliveries',
    operation: listOutboundDeliveries,
    title: 'Outbound Deliveries',
    description: 'The outbound delivery log (filters: event_id, endpoint_id, status; paged).',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  {
    name: 'billing_replay_webhook_event',
    operation: replayOutboundEvent,
    title: 'Replay Webhook Event',
    description: 'Deliver one event again (same webhook-id), to one endpoint_id or to every endpoint it went to.',
    // Queues the delivery; the worker POSTs it later to the tenant's own endpoint, no provider or store.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  },
  {
    name: 'billing_replay_failed_webhooks',
    operation: replayFailedDeliveries,
    title: 'Replay Failed Webhooks',
    description:
      'Deliver again every delivery that failed since a time (ISO 8601), optionally of one endpoint_id; has_more: call again.',
    // As above: queued for the worker, which POSTs to the tenant's own endpoints.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  },
  {
    name: 'billing_customer',
    operation: getCustomer,
    title: 'Customer',
    description:
      'One app user: each entitlement (paid or granted) with why it is in its state, and the timeline newest first (paged).',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  {
    name: 'billing_grant_entitlement',
    operation: grantEntitlement,
    title: 'Grant Entitlement',
    description:
      'Give an app user a product by hand (product_id or sku) until expires_at or for duration_days, with a reason; store events never undo it.',
    // Each call makes another grant.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  },
  {
    name: 'billing_revoke_grant',
    operation: revokeGrantOp,
    title: 'Revoke Grant',
    description: 'End a grant made by hand now (app_user_id and the grant id); paid access is untouched.',
    // The app user loses that access at once; revoking again changes nothing more.
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  },
];
