import { Runtime } from '@temporalio/worker';
import { loadConfig } from '../runtime/config';
import { openDatabase } from '../db/open-database';
import { logger } from '../runtime/logger';
import { startMetricsServer } from '../runtime/metrics';
import { freePort } from '../runtime/ports';
import { startTracing } from '../runtime/tracing';
import { resolveMasterKey } from '../vault/master-key';
import { createVault } from '../vault/vault';
import { createAdapters } from '../providers';
import { ensureSearchAttributes } from './client';
import type { createWorker, WorkerOptions } from './worker';
import { startRollupFolding } from './rollup-folding';

/**
 * A worker process from start to stop, as both worker-main.ts and outbound-worker-main.ts run
 * it: configuration, vault, tracing, metrics, the database as the login role, the search
 * attributes; then the worker `create` makes (from the deployment's task queue) runs until it
 * is stopped.
 */
export async function runWorkerProcess(name: 'worker' | 'outbound worker', create: typeof createWorker): Promise<void> {
  const config = loadConfig();
  if (!config.temporalAddress) throw new Error(`TEMPORAL_ADDRESS is required for the ${name} (npm start sets it)`);
  const vault = createVault(resolveMasterKey(config)); // fails fast, naming MASTER_KEY, in production without it
  const tracing = startTracing(config.tracing, `billing-${name.replace(' ', '-')}`);
  // The SDK's own worker metrics (task slots, poll and schedule-to-start latencies, sticky cache)
  // come from its Rust core, which serves Prometheus text on an address of its own: a loopback
  // port only this process knows, appended to our /metrics so the worker is one scrape target.
  let coreMetrics: (() => Promise<string>) | undefined;
  if (config.metricsPort) {
    const corePort = await freePort();
    Runtime.install({ telemetryOptions: { metrics: { prometheus: { bindAddress: `127.0.0.1:${corePort}` } } } });
    coreMetrics = async () =>
      (await fetch(`http://127.0.0.1:${corePort}/metrics`, { signal: AbortSignal.timeout(2000) })).text();
  }
  const { db, close } = await openDatabase(config, { pool: { max: 10 } });
  // Idempotent: workflows are started with these attributes, so the cluster must know them.
  await ensureSearchAttributes(config.temporalAddress, config.temporalNamespace);
  const options: WorkerOptions = {
    address: config.temporalAddress,
    namespace: config.temporalNamespace,
    taskQueue: config.taskQueue,
    deps: { db, config, vault, adapters: createAdapters(config) },
    tracing: config.tracing ? tracing : undefined,
    workflowBundlePath: config.workflowBundlePath,
  };
  const { worker, connection } = await create(options);
  const metrics = config.metricsPort ? await startMetricsServer(config.metricsPort, coreMetrics) : null;
  if (metrics) logger.info({ port: metrics.port }, 'metrics listening on 127.0.0.1');
  logger.info({ task_queue: worker.options.taskQueue }, `${name} started`);
  // The inbound worker also folds the overview's rollups, so no page view writes.
  const folding = name === 'worker' ? startRollupFolding(db, logger) : null;
  await worker.run();
  await folding?.stop();
  await metrics?.close();
  await tracing.shutdown();
  await connection.close();
  await close();
}
