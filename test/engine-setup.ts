import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { bundleWorkflowCode } from '@temporalio/worker';
import { startDevServer, type DevServerHandle } from '../temporal/dev-server';
import { freePort, isPortOpen } from '../runtime/ports';
import { ensureSearchAttributes } from '../temporal/client';
import { dropDatabases, startPostgresTemporal, type PostgresTemporalHandle } from '../temporal/postgres-server';
import { findTemporalServerBinaries } from '../temporal/server-binaries';
import { workflowBundleOptions } from '../temporal/worker';
import { runDatabase } from './global-setup';

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    taskQueuePrefix: string;
    /** The workflow code bundled once for the run: every test worker loads it instead of bundling its own. */
    workflowBundlePath: string;
  }
}

/**
 * The engine tier's setup, after test/global-setup.ts made the run's database: a Temporal server
 * (TEMPORAL_ADDRESS when it answers, else an in-memory dev server from the same binary `npm start`
 * uses) and the workflow code bundled once. Only engine files (test/tiers.ts) get these, so a run
 * of database or pure files starts no Temporal and bundles nothing.
 * TEMPORAL_POSTGRES=1 (`npm run test:temporal-postgres`): Temporal's own server on this run's
 * Postgres instead (databases of its own, dropped at the end; docs/scaling.md), its services in
 * one process or, with TEMPORAL_POSTGRES_LAYOUT=per-service, one process each.
 */
export default async function setup(project: TestProject) {
  const { runId, serverUrl } = await runDatabase();
  // Bundling the workflows (webpack) takes seconds; once here, beside starting the server.
  const bundleDir = fs.mkdtempSync(path.join(os.tmpdir(), 'billing-test-workflows-'));
  const workflowBundlePath = path.join(bundleDir, 'workflow-bundle.js');
  const bundled = bundleWorkflowCode({ ...workflowBundleOptions(false), logger: quietBundleLogger }).then(({ code }) =>
    fs.writeFileSync(workflowBundlePath, code),
  );
  bundled.catch(() => {});

  let temporal: DevServerHandle | PostgresTemporalHandle | undefined;
  let dropTemporal = () => {};
  let temporalAddress = process.env.TEMPORAL_POSTGRES === '1' ? undefined : process.env.TEMPORAL_ADDRESS;
  if (process.env.TEMPORAL_POSTGRES === '1') {
    const binaries = findTemporalServerBinaries({ log: (m) => console.log(`[engine-setup] ${m}`) });
    const database = `temporal_test_${runId}`;
    dropTemporal = () => dropDatabases(binaries, serverUrl, database);
    const pgTemporal = await startPostgresTemporal({
      databaseUrl: serverUrl,
      database,
      binaries,
      numHistoryShards: 4,
      maxConns: 4,
      layout: process.env.TEMPORAL_POSTGRES_LAYOUT === 'per-service' ? 'per-service' : 'one-process',
      dir: fs.mkdtempSync(path.join(os.tmpdir(), 'billing-test-temporal-pg-')),
    }).catch((e) => {
      // No teardown runs after a failed setup: leave no database behind on a shared server.
      dropTemporal();
      throw e;
    });
    temporal = pgTemporal;
    temporalAddress = pgTemporal.address;
  } else if (temporalAddress) {
    const [host, port] = temporalAddress.split(':');
    if (!(await isPortOpen(host, Number(port)))) temporalAddress = undefined;
  }
  if (!temporalAddress) {
    temporal = await startDevServer({ port: await freePort(), uiPort: null });
    temporalAddress = temporal.address;
  } else {
    await ensureSearchAttributes(temporalAddress, 'default', 10_000);
  }

  await bundled;
  project.provide('workflowBundlePath', workflowBundlePath);
  project.provide('temporalAddress', temporalAddress);
  project.provide('taskQueuePrefix', `billing-test-${runId}`);

  return async () => {
    await temporal?.stop();
    dropTemporal();
    fs.rmSync(bundleDir, { recursive: true, force: true });
  };
}

const quietBundleLogger = {
  trace() {},
  debug() {},
  info() {},
  log() {},
  warn: (m: string) => console.warn(`[engine-setup] ${m}`),
  error: (m: string) => console.error(`[engine-setup] ${m}`),
};
