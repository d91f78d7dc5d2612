import http from 'node:http';
import { Connection } from '@temporalio/client';
import { workflowClient } from '../temporal/client';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import { loadConfig } from '../runtime/config';
import { resolveMasterKey } from '../vault/master-key';
import { createVault } from '../vault/vault';
import { createAdapters } from '../providers';
import { openDatabase } from '../db/open-database';
import { logger } from '../runtime/logger';
import { startMetricsServer } from '../runtime/metrics';
import { startTracing } from '../runtime/tracing';
import { createApiApp, createDashboardApp, createToolsApp } from './apps';
import { createHttpServer } from './http-server';
import type { Services } from '../operations/services';
import { startDispatcher, stopDispatcher } from './webhooks/dispatcher';
import { startEntitlementWaits, stopEntitlementWaits } from './sdk/entitlement-waits';
import { startVoidedPurchaseSweeps } from '../temporal/workflow-starts';
import { registerOutboxGauges, registerProvisionalExpiry } from './metrics';
import { ensureAllReconciliationSchedules } from '../temporal/reconciliation-schedules';
import { ensureSigningKeySchedule } from '../temporal/signing-key-schedule';
import { ensureEventDigestSchedule } from '../temporal/event-digest-schedule';
import { ensureOAuthCleanupSchedule } from '../temporal/oauth-cleanup-schedule';
import { ensureScheduledExportSchedule } from '../temporal/scheduled-export-schedule';
import { readinessDetail } from './health';
import { autovacuumRuns } from '../db/server-settings';
import { signingKeys } from '../db/signing-key-service';

// The api process: the three stateless listeners (API, dashboard host, tool server).
const config = loadConfig();
// Before anything else: the tracer provider must be registered before the first span (off by default).
const tracing = startTracing(config.tracing, 'billing-api');
const { db } = await openDatabase(config, { pool: { max: 20 } });
const vault = createVault(resolveMasterKey(config));
let temporal: Services['temporal'] = null;
if (config.temporalAddress) {
  const connection = Connection.lazy({ address: config.temporalAddress });
  // The worker's codec: what this client starts and signals is encrypted, what it reads decrypted.
  // Tracing on: the interceptor puts the active trace in the headers of what this client starts and signals.
  temporal = {
    connection,
    client: workflowClient(
      connection,
      config.temporalNamespace,
      vault,
      config.tracing ? [new OpenTelemetryWorkflowClientInterceptor()] : [],
    ),
  };
}

// Webhook verification needs the signing secrets (decrypted only there) and the adapters' verifiers.
const services: Services = { db, config, temporal, vault, adapters: createAdapters(config) };
// A deployment signs tokens and digests from its first request: its first key is made now if missing.
await signingKeys(db, vault).ensureSigningKey();

const listeners: [string, number, http.RequestListener][] = [
  ['api', config.apiPort, createApiApp(services, logger).callback()],
  ['dashboard', config.dashboardPort, createDashboardApp(services, logger).callback()],
  ['tools', config.toolsPort, createToolsApp(services, logger).callback()],
];
const servers = await Promise.all(
  listeners.map(
    ([name, port, handler]) =>
      new Promise<http.Server>((resolve, reject) => {
        // Timeouts and the connection caps on every listener (api/http-server.ts, HTTP_* variables).
        const s = createHttpServer(handler, config.httpLimits, config.trustedProxies);
        s.once('error', reject);
        s.listen(port, config.bindHost, () => {
          logger.info({ listener: name, port }, 'listening');
          resolve(s);
        });
      }),
  ),
);
// Metrics on their own loopback listener (METRICS_PORT; 0 = none), with /readyz naming each
// check: the public listeners' /readyz says only ready or not (api/health.ts).
registerOutboxGauges(db, config.taskQueue);
registerProvisionalExpiry(db);
const metrics = config.metricsPort
  ? await startMetricsServer(config.metricsPort, undefined, { '/readyz': readinessDetail(services) })
  : null;
if (metrics) logger.info({ port: metrics.port }, 'metrics listening on 127.0.0.1');
// Told once per start: a server without autovacuum slows every write as the tables grow.
if (!(await autovacuumRuns(db).catch(() => true)))
  logger.warn(
    'PostgreSQL runs without autovacuum: table statistics are never refreshed and lookups slow as tables grow (docs/operations.md, "Postgres")',
  );
// Rows a crash or an outage left in the webhook outbox drain now, not on the next webhook.
startDispatcher(services);
logger.info({ task_queue: config.taskQueue }, 'webhook outbox dispatcher started');
// The LISTEN session that wakes the SDK's bounded waits (GET /v1/sdk/subscribers/{id}?wait_for=premium).
await startEntitlementWaits(services);
logger.info('entitlement listener started');
// Play's Voided Purchases API is swept for every Play connection from the start (docs/lifecycles.md).
if (temporal && config.tenantSchedulesAtStart) {
  startVoidedPurchaseSweeps(temporal.client, config.taskQueue, db).then(
    (n) => logger.info({ connections: n }, 'voided purchase sweeps started'),
    (err) => logger.warn({ error: String((err as Error).message) }, 'voided purchase sweeps not started'),
  );
  // Every tenant with a proven connection has its reconciliation schedules (docs/reconciliation.md, "Scheduled").
  ensureAllReconciliationSchedules(temporal.client, config.taskQueue, db).then(
    (n) => logger.info({ tenants: n }, 'reconciliation schedules ensured'),
    (err) => logger.warn({ error: String((err as Error).message) }, 'reconciliation schedules not ensured'),
  );
  // The signing key rotates on a schedule (docs/entitlement-tokens.md, "Rotating and withdrawing keys").
  ensureSigningKeySchedule(temporal.client, config.taskQueue).then(
    (outcome) => logger.info({ outcome }, 'signing key rotation schedule ensured'),
    (err) => logger.warn({ error: String((err as Error).message) }, 'signing key rotation schedule not ensured'),
  );
  // Each tenant's signed digest of the day before (docs/event-proofs.md, "Daily digest").
  ensureEventDigestSchedule(temporal.client, config.taskQueue).then(
    (outcome) => logger.info({ outcome }, 'event digest schedule ensured'),
    (err) => logger.warn({ error: String((err as Error).message) }, 'event digest schedule not ensured'),
  );
  // Expired assistant sign-in records go in bounded batches (docs/assistant-sign-in.md, "Expired records").
  ensureOAuthCleanupSchedule(temporal.client, config.taskQueue).then(
    (outcome) => logger.info({ outcome }, 'sign-in records cleanup schedule ensured'),
    (err) => logger.warn({ error: String((err as Error).message) }, 'sign-in records cleanup schedule not ensured'),
  );
  // Each active destination's days uploaded to its storage (docs/exports.md, "Scheduled exports to your bucket").
  ensureScheduledExportSchedule(temporal.client, config.taskQueue).then(
    (outcome) => logger.info({ outcome }, 'scheduled export schedule ensured'),
    (err) => logger.warn({ error: String((err as Error).message) }, 'scheduled export schedule not ensured'),
  );
}
const shutdown = async () => {
  // Held waits answer now (what is true), so the listeners below can close.
  await stopEntitlementWaits(services);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  await stopDispatcher(services);
  await metrics?.close();
  await tracing.shutdown();
  await db.destroy();
  process.exit(0);
};
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
