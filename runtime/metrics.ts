import http from 'node:http';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

/**
 * The process's Prometheus metrics (prom-client), served on a loopback listener of their own
 * (`METRICS_PORT`, docs/operations.md), never on the public listeners.
 *
 * Labels are bounded sets chosen here (operation names, providers, outcomes, status codes):
 * never a tenant id, key, customer or email. A tenant label would grow with every sign-up (a
 * time series per tenant per metric) and name customers to whoever reads the dashboards.
 */
export const registry = new Registry();
collectDefaultMetrics({ register: registry });

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * Management operations (REST and tool server alike), by the code the caller was answered with (`ok` or the error
 * code).
 */
export const operationRequests = new Counter({
  name: 'billing_operation_requests_total',
  help: 'Management operations executed, by operation, surface (rest|tool) and answer code (ok or the error code).',
  labelNames: ['operation', 'surface', 'code'] as const,
  registers: [registry],
});
export const operationDuration = new Histogram({
  name: 'billing_operation_duration_seconds',
  help: 'Time to execute a management operation (scope check to audit row), by operation and surface.',
  labelNames: ['operation', 'surface'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

/** Every HTTP request on the three listeners, by route family (not path: paths carry ids). */
export const httpRequests = new Counter({
  name: 'billing_http_requests_total',
  help: 'HTTP requests answered, by listener (api|dashboard|tools), route family and status code.',
  labelNames: ['listener', 'route', 'status'] as const,
  registers: [registry],
});
export const httpDuration = new Histogram({
  name: 'billing_http_request_duration_seconds',
  help: 'HTTP request latency, by listener and route family.',
  labelNames: ['listener', 'route'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

/** Connections a listener dropped on accept: past HTTP_MAX_CONNECTIONS, or past one address's share of it. */
export const connectionsDropped = new Counter({
  name: 'billing_http_connections_dropped_total',
  help: 'HTTP connections dropped on accept, by reason (max_connections|per_address).',
  labelNames: ['reason'] as const,
  registers: [registry],
});

export const rateLimitRefusals = new Counter({
  name: 'billing_rate_limit_refusals_total',
  help: "Management requests refused with 429 because the tenant's token bucket was empty.",
  registers: [registry],
});

export const webhookReceipts = new Counter({
  name: 'billing_webhook_receipts_total',
  help: 'Provider webhooks received, by provider and outcome (queued|duplicate|no_effect|refused|invalid_event|unavailable|error).',
  labelNames: ['provider', 'outcome'] as const,
  registers: [registry],
});

/**
 * Receipts refused, by why: `too_deep`, `no_account` (the body names none), `unclaimed_account`
 * (it names one no connection has proven: stored under no tenant; for psp_b/psp_c, often a seller
 * connected with a pasted key that has not connected with OAuth), `signature` (the account's
 * tenant is named, the signature failed), `invalid_event` (signed, but unusable). `kept`: whether
 * a refusal row was stored (yes) or the per-minute cap was full (no).
 */
export const webhookRefusals = new Counter({
  name: 'billing_webhook_refusals_total',
  help: 'Provider webhooks refused, by provider, reason (too_deep|no_account|unclaimed_account|signature|invalid_event) and kept (yes|no: the per-minute cap was full).',
  labelNames: ['provider', 'reason', 'kept'] as const,
  registers: [registry],
});

export const handovers = new Counter({
  name: 'billing_webhook_handovers_total',
  help: 'Outbox groups handed to Temporal by the dispatcher, by outcome (ok|unavailable|refused|failed).',
  labelNames: ['outcome'] as const,
  registers: [registry],
});
export const handoverLatency = new Histogram({
  name: 'billing_webhook_handover_seconds',
  help: 'From a webhook stored (its outbox row committed) to its hand-over to Temporal.',
  buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
  registers: [registry],
});

export const entitlementWrites = new Counter({
  name: 'billing_entitlement_writes_total',
  help: 'Entitlement rows written by the worker, by provider and resulting state.',
  labelNames: ['provider', 'state'] as const,
  registers: [registry],
});

/**
 * Restores that found the purchase held by another app user (docs/transfers.md), by the tenant's
 * policy and what became of them: `refused`, `pending`, `completed` (at once, or approved),
 * `rejected`, `undone`. Counted where it happened: the worker for registrations, the api for decisions.
 */
export const transfersCounter = new Counter({
  name: 'billing_transfers_total',
  help: 'Restores of a purchase another app user held, by restore policy and outcome.',
  labelNames: ['policy', 'outcome'] as const,
  registers: [registry],
});

/**
 * The lag people page on (docs/operations.md, "Objectives"): a verified receipt to premium. `source`
 * `provisional`: to the provisional grant, observed by the api's receiver once the statement that
 * stored the delivery and granted commits; `authoritative`: to the entitlement write, observed by
 * the worker once its transaction commits, from the delivery's stored receipt time (the
 * database's clock, so api and worker clocks need not agree). Per-tenant figures come from the
 * database (db/overview-latency.ts), never from a tenant label here.
 */
export const receiptToPremium = new Histogram({
  name: 'billing_receipt_to_premium_seconds',
  help: 'From a verified provider webhook stored to premium visible, by provider and source (provisional: the grant at receipt; authoritative: the entitlement write).',
  labelNames: ['provider', 'source'] as const,
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
  registers: [registry],
});

/** An outbound event created to its delivery answered with a 2xx, per delivered endpoint (worker). */
export const outboundEventToDelivered = new Histogram({
  name: 'billing_outbound_event_to_delivered_seconds',
  help: "From an outbound event created to its delivery acknowledged (2xx) by a tenant's endpoint.",
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900],
  registers: [registry],
});

export const syncRuns = new Counter({
  name: 'billing_sync_runs_total',
  help: 'Catalogue sync runs finished, by outcome (ok|failed).',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

/**
 * 429s (and the wait registry's 503) of the client endpoints (/v1/sdk/*), by the limit that
 * refused: `tenant`, `address`, `user`, `registration_user`, `registration_address`,
 * `registration_tenant`, `wait_user`, `wait_address`, `wait_tenant`, `wait_process`.
 */
export const clientRateRefusals = new Counter({
  name: 'billing_client_rate_limit_refusals_total',
  help: 'Client endpoint (/v1/sdk) requests refused by a rate limit or wait cap, by the limit that refused.',
  labelNames: ['limit'] as const,
  registers: [registry],
});

/** Premium checks answered while their tenant's client bucket was empty (docs/limits.md). */
export const readsOverTenantLimit = new Counter({
  name: 'billing_sdk_reads_over_tenant_limit_total',
  help: "Premium checks (GET /v1/sdk/subscribers) answered from stored state while the tenant's client bucket was empty.",
  registers: [registry],
});

/**
 * Dashboard log-in and sign-up forms, by outcome (`ok`, `invalid_credentials`, `refused`), the
 * limit that refused (`pair`, `ip`, `account`, `device`, `signup`; `none` otherwise) and whether the
 * browser held a device cookie for the account (`known`, `none`).
 */
export const dashboardAuthAttempts = new Counter({
  name: 'billing_dashboard_auth_attempts_total',
  help: 'Dashboard log-in and sign-up form posts, by form (login|signup), outcome (ok|invalid_credentials|refused), refusing limit and device (known|none).',
  labelNames: ['form', 'outcome', 'limit', 'device'] as const,
  registers: [registry],
});

/** Temporal payloads the codec refused (temporal/payload-codec.ts): each one failed the task that carried it. */
export const payloadRefusals = new Counter({
  name: 'billing_temporal_payload_refusals_total',
  help: 'Temporal payloads the codec refused to decode, by reason (plaintext|unbound|unknown_key|authentication|malformed); the workflow or activity task carrying one fails and is retried.',
  labelNames: ['reason'] as const,
  registers: [registry],
});

/** Seconds since `start` (a process.hrtime.bigint() reading). */
export function secondsSince(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e9;
}

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

/**
 * `GET /metrics` on 127.0.0.1 only: metrics name operations and providers, and scraping is for
 * the machine's own agent (or a sidecar). `more` appends another exposition (the Temporal SDK's
 * worker metrics), so a process is one scrape target; when it cannot be read the rest is served.
 * `json` adds GET routes answering JSON, for what only the operator may read (the api's
 * `/readyz` with each check named).
 */
export async function startMetricsServer(
  port: number,
  more?: () => Promise<string>,
  json: Record<string, () => Promise<{ status: number; body: unknown }>> = {},
): Promise<MetricsServer> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    const route = req.method === 'GET' && Object.hasOwn(json, path) ? json[path] : undefined;
    if (route) {
      route().then(
        ({ status, body }) =>
          res
            .writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' })
            .end(JSON.stringify(body)),
        (e: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`${path} failed: ${e.message}\n`),
      );
      return;
    }
    if (req.method !== 'GET' || path !== '/metrics') {
      res
        .writeHead(404, { 'content-type': 'text/plain' })
        .end(`not found: GET ${['/metrics', ...Object.keys(json)].join(', ')}\n`);
      return;
    }
    void (async () => {
      let body = await registry.metrics();
      if (more)
        body += await more().catch(
          (e: Error) => `# the Temporal SDK metrics could not be read: ${e.message.split('\n')[0]}\n`,
        );
      res.writeHead(200, { 'content-type': registry.contentType }).end(body);
    })().catch((e: Error) =>
      res.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics failed: ${e.message}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as { port: number }).port,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** Reconciliation repairs (docs/reconciliation.md): subscriptions whose provider state differed and was applied. */
export const reconciliationRepairs = new Counter({
  name: 'billing_reconciliation_repairs_total',
  help: 'Subscriptions repaired by reconciliation (the provider state differed from what was held), by provider.',
  labelNames: ['provider'] as const,
  registers: [registry],
});
