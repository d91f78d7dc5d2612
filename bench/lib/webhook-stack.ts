/**
 * The whole webhook path as `npm start` runs it, on throwaway state, for the webhook benchmarks:
 * a scratch database on DATABASE_URL (created, migrated, dropped), a file-backed Temporal dev
 * server with the pragmas `npm start` passes, the api and both workers as their own processes
 * (`api/main.ts`, `temporal/worker-main.ts`, `temporal/outbound-worker-main.ts`), the psp_a emulator in this process, and one
 * tenant with a psp_a connection and the product `pro`.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Knex } from 'knex';
import { Client, Connection } from '@temporalio/client';
import type { PayloadCodec } from '@temporalio/common';
import { createConnection, markConnectionProven } from '../../db/connection-service';
import { createKnex, withDatabase } from '../../db/knex';
import { migrateLatest } from '../../db/migrate';
import { createTenant } from '../../db/tenants';
import { withTenant } from '../../db/tenant-tx';
import { startAllEmulators } from '../../emulators/registry';
import type { RunningEmulator } from '../../emulators/common/host';
import type { ProviderId } from '../../domain/providers';
import { createVault, generateMasterKey, type Vault } from '../../vault/vault';
import { freePort } from '../../runtime/ports';
import { ensureSearchAttributes } from '../../temporal/client';
import { dataConverterFor, payloadCodecFor } from '../../temporal/payload-codec';
import { startDevServer, type DevServerHandle } from '../../temporal/dev-server';
import { createEmulatorAccount } from '../../seed/demo-providers';
import { startAutovacuumStandIn, type AutovacuumStandIn } from './autovacuum-stand-in';
import { atInterrupt, startServer, track, type ServerHandle } from './proc';
import { SERVICE_NODE_FLAGS } from '../../runtime/node-flags';
import { loadConfig } from '../../runtime/config';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface WebhookStack {
  db: Knex;
  dbName: string;
  pgVersion: string;
  temporal: DevServerHandle;
  client: Client;
  /** The stack's payload codec: histories fetched raw hold ciphertext (decodeHistory). */
  codec: PayloadCodec;
  emulators: Record<ProviderId, RunningEmulator>;
  api: ServerHandle;
  worker: { pid: number; stop(): Promise<void> };
  /** The outbound worker process (deliveries and the outbound outbox), as `npm start` runs it. */
  outboundWorker: { pid: number };
  apiRoot: string;
  webhookUrl: string;
  tenant: { tenant_id: string; publishable_key: string };
  account: string;
  /** The psp_a account's API keys (per mode), for benches that build a catalogue at the emulator. */
  accountKeys: { test: { secret_key: string }; live: { secret_key: string } };
  webhookSecret: string;
  taskQueue: string;
  /** The processes' MASTER_KEY as a vault: what the bench stores encrypted, they can read. */
  vault: Vault;
  /** The bench's stand-in for autovacuum on a server without it (bench/lib/autovacuum-stand-in.ts); null: none. */
  autovacuum: AutovacuumStandIn | null;
  stop(): Promise<void>;
}

const BENCH_APPLICATION_NAME = 'billing-bench';

export async function startWebhookStack(log: (m: string) => void): Promise<WebhookStack> {
  const base = process.env.DATABASE_URL;
  if (!base) throw new Error('DATABASE_URL is required (a Postgres the bench can create a scratch database on)');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'billing-webhook-bench-'));
  const dbName = `billing_bench_wh_${Date.now().toString(36)}_${crypto.randomBytes(2).toString('hex')}`;
  const admin = createKnex(base, { max: 1 });
  await admin.raw(`create database "${dbName}"`);
  const url = withDatabase(base, dbName);
  // Named, so the CPU table can tell the bench's own reads (its watcher, its rate-limit refill) from the service's.
  const benchUrl = new URL(url);
  benchUrl.searchParams.set('application_name', BENCH_APPLICATION_NAME);
  const db = createKnex(benchUrl.toString(), { max: 4 });
  const stops: (() => Promise<unknown>)[] = [];
  // Interrupted (SIGINT/SIGTERM/SIGHUP) before `stop` runs: the children are killed (track) and the
  // throwaway database and files go too, not left behind for the next run to find.
  const unhookDrop = atInterrupt(async () => {
    await admin.raw(`drop database if exists "${dbName}" with (force)`).catch(() => {});
    fs.rmSync(tmp, { recursive: true, force: true });
  });
  const stop = async () => {
    unhookDrop();
    for (const s of stops.reverse()) await s().catch((e) => log(`stop: ${e.message}`));
    await db.destroy().catch(() => {});
    await admin.raw(`drop database if exists "${dbName}" with (force)`).catch((e) => log(`drop: ${e.message}`));
    await admin.destroy();
    fs.rmSync(tmp, { recursive: true, force: true });
  };
  try {
    await migrateLatest(db);
    // BENCH_AUTOVACUUM=0: no stand-in on a server without autovacuum (the comparison: no statistics at all).
    const autovacuum = process.env.BENCH_AUTOVACUUM === '0' ? null : await startAutovacuumStandIn(url, log);
    if (autovacuum) stops.push(() => autovacuum.stop());
    const pgVersion = String((await db.raw('show server_version')).rows[0].server_version);

    const temporal = await startDevServer({
      port: await freePort(),
      uiPort: null,
      dbFile: path.join(tmp, 'temporal.db'),
      logFile: path.join(tmp, 'temporal.log'),
      // As `npm start`: the engine yields the CPU to the api (ENGINE_NICE=0 in the bench's environment: the comparison).
      // BENCH_TEMPORAL_NICE: the dev server's alone (which of the engine's two processes yielding matters).
      nice: process.env.BENCH_TEMPORAL_NICE ? Number(process.env.BENCH_TEMPORAL_NICE) : loadConfig().engineNice,
      // BENCH_TEMPORAL_DYNAMIC_CONFIG='KEY=JSON;KEY=JSON' ('' for none): compare against the defaults.
      dynamicConfig:
        process.env.BENCH_TEMPORAL_DYNAMIC_CONFIG === undefined
          ? undefined
          : process.env.BENCH_TEMPORAL_DYNAMIC_CONFIG.split(';').filter(Boolean),
    });
    track(temporal.process); // an interrupted bench leaves no dev server behind
    stops.push(() => temporal.stop());
    await ensureSearchAttributes(temporal.address, 'default', 20_000);
    // The api and worker processes get MASTER_KEY below; this client encrypts and decrypts as they do.
    const masterKey = generateMasterKey();
    const vault = createVault(masterKey);
    const connection = await Connection.connect({ address: temporal.address });
    stops.push(() => connection.close());
    const client = new Client({ connection, dataConverter: dataConverterFor(masterKey) });

    const emulators = await startAllEmulators(
      { emulatorPorts: {} as never, dataDir: '' },
      { persistent: false, anyPort: true },
    );
    stops.push(() => Promise.all(Object.values(emulators).map((e) => e.close())));

    const tenant = await createTenant(db, { name: 'webhook bench' });
    const acct = await createEmulatorAccount(emulators.psp_a.url);
    await withTenant(db, tenant.tenant_id, async (trx) => {
      const conn = await createConnection(trx, vault, {
        provider: 'psp_a',
        account_ref: acct.account,
        credentials: acct.credentials,
        webhook_secret: acct.webhook_secret,
      });
      // The emulator's control API handed us this account: it routes events without the probe (docs/providers.md).
      await markConnectionProven(trx, conn.id, 'control_api');
      await trx('products').insert({ tenant_id: tenant.tenant_id, sku: 'pro', name: 'Pro', tier: 'monthly' });
    });

    const taskQueue = 'billing';
    const [apiPort, dashboardPort, toolsPort] = [await freePort(), await freePort(), await freePort()];
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      NODE_ENV: 'development',
      DATABASE_URL: url,
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_TASK_QUEUE: taskQueue,
      MASTER_KEY: masterKey,
      // The api and the worker would both claim METRICS_PORT's default; nothing here scrapes it.
      METRICS_PORT: '0',
      LOG_LEVEL: 'warn',
      DATA_DIR: tmp,
      API_PORT: String(apiPort),
      DASHBOARD_PORT: String(dashboardPort),
      TOOLS_PORT: String(toolsPort),
      PSP_A_API_BASE: emulators.psp_a.url,
    };
    // BENCH_CPU_PROF_DIR=<dir>: the api and both workers write V8 CPU profiles there when they stop (every thread).
    const profDir = process.env.BENCH_CPU_PROF_DIR;
    // BENCH_NODE_ARGS='--flag …': node flags for the api and both workers (a V8 setting measured against none);
    // BENCH_SERVICE_NODE_FLAGS=0 leaves out the ones `npm start` gives them (runtime/node-flags.ts).
    const nodeArgs = [
      ...(process.env.BENCH_SERVICE_NODE_FLAGS === '0' ? [] : SERVICE_NODE_FLAGS),
      ...(profDir ? ['--cpu-prof', '--cpu-prof-dir', profDir] : []),
      ...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean),
    ];
    const api = await startServer({
      cwd: ROOT,
      script: 'api/main.ts',
      nodeArgs,
      env,
      port: dashboardPort,
      logFile: path.join(tmp, 'api.log'),
      // Like the workers below: loading the api's code on a machine shared at load 20–30 can take longer than 30 s.
      timeoutMs: 180_000,
    });
    stops.push(() => api.stop());
    // The workers have no HTTP port: started the same way, ready once they have polled (their logs say so).
    const { spawn } = await import('node:child_process');
    const startWorker = async (name: string, script: string) => {
      const logFile = path.join(tmp, `${name}.log`);
      const out = fs.openSync(logFile, 'w');
      const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', script], {
        cwd: ROOT,
        env: { ...env, LOG_LEVEL: 'info' },
        stdio: ['ignore', out, out],
      });
      fs.closeSync(out);
      track(child);
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      stops.push(async () => {
        child.kill('SIGTERM');
        const t = setTimeout(() => child.kill('SIGKILL'), 8000);
        await exited;
        clearTimeout(t);
      });
      // Each worker bundles the workflow code at start: on a machine shared at load 30–40 that alone can take a minute.
      const deadline = Date.now() + 180_000;
      while (!fs.readFileSync(logFile, 'utf8').includes('worker started')) {
        if (child.exitCode !== null)
          throw new Error(`${name} exited: ${fs.readFileSync(logFile, 'utf8').slice(-2000)}`);
        if (Date.now() > deadline) throw new Error(`${name} did not start within 180 s`);
        await new Promise((r) => setTimeout(r, 200));
      }
      return child;
    };
    // As `npm start`: outbound deliveries in a process of their own, beside the inbound worker.
    const [child, outbound] = await Promise.all([
      startWorker('worker', 'temporal/worker-main.ts'),
      startWorker('outbound-worker', 'temporal/outbound-worker-main.ts'),
    ]);
    log(
      `stack up: database ${dbName}, temporal ${temporal.address}, api pid ${api.pid}, worker pid ${child.pid}, outbound worker pid ${outbound.pid}`,
    );
    log(
      `CPU priority (nice): api ${os.getPriority(api.pid)}, worker ${os.getPriority(child.pid!)}, outbound worker ${os.getPriority(outbound.pid!)}, Temporal ${os.getPriority(temporal.process.pid!)}`,
    );
    return {
      db,
      dbName,
      pgVersion,
      temporal,
      client,
      codec: payloadCodecFor(masterKey),
      emulators,
      api,
      worker: { pid: child.pid!, stop: async () => {} },
      outboundWorker: { pid: outbound.pid! },
      apiRoot: `http://127.0.0.1:${apiPort}`,
      webhookUrl: `http://127.0.0.1:${dashboardPort}/api/webhooks/psp_a`,
      tenant,
      account: acct.account,
      accountKeys: acct.credentials as WebhookStack['accountKeys'],
      webhookSecret: acct.webhook_secret,
      taskQueue,
      vault,
      autovacuum,
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}

/** How many of these event ids have a delivery row (counted 5,000 ids a query). */
export async function storedDeliveries(stack: WebhookStack, ids: string[]): Promise<number> {
  let n = 0;
  for (let k = 0; k < ids.length; k += 5000)
    n += Number(
      (
        await stack
          .db('webhook_deliveries')
          .whereIn('event_id', ids.slice(k, k + 5000))
          .count('* as n')
      )[0].n,
    );
  return n;
}

export const quantile = (sorted: number[], q: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] : NaN;

/** Replace (or append) a generated block `<!-- bench/<name>: generated … -->` under `title` in bench/RESULTS.md. */
export function writeResults(name: string, title: string, body: string): void {
  const file = path.join(ROOT, 'bench/RESULTS.md');
  const begin = `<!-- bench/${name}: generated from here -->`;
  const end = `<!-- bench/${name}: generated up to here -->`;
  const block = `${begin}\n${body.trim()}\n${end}`;
  let text = fs.readFileSync(file, 'utf8');
  if (text.includes(begin))
    text = text.slice(0, text.indexOf(begin)) + block + text.slice(text.indexOf(end) + end.length);
  else text = `${text.replace(/\s*$/, '')}\n\n## ${title}\n\n${block}\n`;
  fs.writeFileSync(file, text);
}

import { pidsCpu, systemCpu } from './cpu';

/**
 * CPU spent by each part of the stack over a phase (from /proc): this process (load generator,
 * emulator), the api, both workers, the Temporal dev server, the database's Postgres backends, and
 * the whole machine (everyone's work). Call once at the start; the returned function ends the phase.
 */
export async function cpuPhase(
  stack: WebhookStack,
): Promise<() => Promise<{ parts: Record<string, number>; machineBusyMs: number; wallMs: number }>> {
  // The database's backends: the service's, and the bench's own (its pool is named BENCH_APPLICATION_NAME).
  const backends = async () => {
    const rows: { pid: number; bench: boolean }[] = (
      await stack.db.raw('select pid, application_name = ? as bench from pg_stat_activity where datname = ?', [
        BENCH_APPLICATION_NAME,
        stack.dbName,
      ])
    ).rows;
    return {
      ours: rows.filter((r) => !r.bench).map((r) => r.pid),
      bench: rows.filter((r) => r.bench).map((r) => r.pid),
    };
  };
  const named = (pg: { ours: number[]; bench: number[] }) => ({
    'load generator + emulator': [process.pid],
    api: [stack.api.pid],
    worker: [stack.worker.pid],
    'outbound worker': [stack.outboundWorker.pid],
    'Temporal dev server': [stack.temporal.process.pid!],
    'Postgres (this database)': pg.ours,
    "Postgres (the bench's own reads)": pg.bench,
  });
  const sum = (pids: number[], m: Map<number, number>) => pids.reduce((k, p) => k + (m.get(p) ?? 0), 0);
  const pg0 = await backends();
  const all0 = pidsCpu(Object.values(named(pg0)).flat());
  const sys0 = systemCpu();
  const t0 = Date.now();
  return async () => {
    const pg1 = await backends();
    const groups = named({
      ours: [...new Set([...pg0.ours, ...pg1.ours])],
      bench: [...new Set([...pg0.bench, ...pg1.bench])],
    });
    const all1 = pidsCpu(Object.values(groups).flat());
    const sys1 = systemCpu();
    const parts: Record<string, number> = {};
    // A backend that appeared during the phase counts from 0 (it was started within it); one that
    // ended within it (a pool closing an idle connection) is left out: its last reading is gone,
    // and subtracting its first would count the phase negative.
    for (const [name, pids] of Object.entries(groups)) {
      const alive = pids.filter((p) => all1.has(p));
      parts[name] =
        sum(alive, all1) -
        sum(
          alive.filter((p) => all0.has(p)),
          all0,
        );
    }
    return { parts, machineBusyMs: sys1.busyMs - sys0.busyMs, wallMs: Date.now() - t0 };
  };
}
