import crypto from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { inject } from 'vitest';
import { PROVIDERS, type ProviderId } from '../../domain/providers';
import { startAllEmulators } from '../../emulators/registry';
import type { RunningEmulator } from '../../emulators/common/host';
import { withTenant } from '../../db/tenant-tx';
import { ROOT_DIR } from '../../runtime/config';
import { freePort, waitForPort } from '../../runtime/ports';
import { createEmulatorAccount } from '../../seed/demo-providers';
import { createVault } from '../../vault/vault';
import { newTenant } from '../helpers/api';
import { createProvenConnection } from '../helpers/connections';
import { testDb } from '../helpers/db';

/**
 * The production processes, separately — the real worker, outbound worker and api processes,
 * from the sources (tsx) or from the compiled dist/ (node) — on a task queue of their own, with
 * the emulators and a tenant connected to psp_a, so a test can buy a subscription through
 * signed webhooks and watch it arrive. Every process here is started (and stopped) by the test.
 */
export interface Proc {
  proc: ChildProcess;
  stderr(): string;
  stop(): Promise<void>;
}

function spawnProcess(args: string[], env: NodeJS.ProcessEnv): Proc {
  const proc = spawn(process.execPath, args, {
    cwd: ROOT_DIR,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  proc.stderr!.on('data', (d) => (stderr += d));
  return {
    proc,
    stderr: () => stderr,
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGTERM');
      await new Promise((r) => proc.once('exit', r));
    },
  };
}

/** `node --import tsx <file>.ts` (as npm run api / worker) or `node dist/<file>.js` (as the image). */
export function entry(mode: 'tsx' | 'compiled', file: string): string[] {
  return mode === 'tsx'
    ? ['--import', 'tsx', path.join(ROOT_DIR, `${file}.ts`)]
    : ['--enable-source-maps', path.join(ROOT_DIR, 'dist', `${file}.js`)];
}

export interface Stack {
  apiUrl: string;
  dashboardUrl: string;
  apiMetricsPort: number;
  workerMetricsPort: number;
  /** The outbound worker's (outbound webhook deliveries; temporal/outbound-worker-main.ts); absent when it was not started. */
  outboundWorkerMetricsPort?: number;
  taskQueue: string;
  tenant: Awaited<ReturnType<typeof newTenant>>;
  publishableKey: string;
  /** Pay for `pro_monthly` at psp_a; the emulator posts its signed webhooks to the api. */
  checkout(appUserId: string): Promise<{ events: { id: string; status: number }[] }>;
  stop(): Promise<void>;
  stderr(): string;
  /** What the worker process wrote to stderr (the Temporal SDK's own log lines go there). */
  workerStderr(): string;
}

/**
 * A bound for a start that hangs, for the hook that calls startStack: three processes loading
 * from sources, a workflow bundle and five emulators took over four minutes on a slow CI host
 * while the run's heaviest files started theirs.
 */
export const STACK_START_MS = 420_000;

export async function startStack(
  mode: 'tsx' | 'compiled',
  env: NodeJS.ProcessEnv = {},
  /** The outbound worker: a file that watches no outbound delivery leaves it out (about 5 s of CPU to start). */
  { outboundWorker = true }: { outboundWorker?: boolean } = {},
): Promise<Stack> {
  const emulators: Record<ProviderId, RunningEmulator> = await startAllEmulators(
    { emulatorPorts: {} as never, dataDir: '' },
    { persistent: false, anyPort: true },
  );
  const masterKey = `k1:${crypto.randomBytes(32).toString('base64')}`;
  const taskQueue = `${inject('taskQueuePrefix')}-ops-${crypto.randomBytes(3).toString('hex')}`;
  const tenant = await newTenant(`ops-${mode}`);
  const acct = await createEmulatorAccount(emulators.psp_a.url);
  await withTenant(testDb(), tenant.tenant_id, async (trx) => {
    await createProvenConnection(trx, createVault(masterKey), {
      provider: 'psp_a',
      account_ref: acct.account,
      credentials: acct.credentials,
      webhook_secret: acct.webhook_secret,
    });
    await trx('products').insert({ tenant_id: tenant.tenant_id, sku: 'pro_monthly', name: 'Pro', tier: 'monthly' });
  });
  const publishableKey = (await testDb()('apps').where({ tenant_id: tenant.tenant_id }).first('publishable_key_test'))
    .publishable_key_test;
  const [apiPort, dashboardPort, toolsPort, apiMetricsPort, workerMetricsPort, outboundWorkerMetricsPort] =
    await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort(), freePort()]);
  const common: NodeJS.ProcessEnv = {
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    DATABASE_URL: inject('databaseUrl'),
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TEMPORAL_TASK_QUEUE: taskQueue,
    MASTER_KEY: masterKey,
    // Not every tenant of the run's database onto this stack's task queue (test/helpers/api-process.ts).
    TENANT_SCHEDULES_AT_START: '0',
    ...Object.fromEntries(PROVIDERS.map((p) => [`${p.toUpperCase()}_API_BASE`, emulators[p].url])),
    ...env,
  };
  const procs: Proc[] = [];
  const stop = async () => {
    await Promise.all(procs.map((p) => p.stop()));
    await Promise.all(Object.values(emulators).map((e) => e.close()));
  };
  const stderr = () => procs.map((p) => p.stderr()).join('\n');
  try {
    procs.push(
      spawnProcess(entry(mode, 'temporal/worker-main'), { ...common, METRICS_PORT: String(workerMetricsPort) }),
    );
    procs.push(
      spawnProcess(entry(mode, 'api/main'), {
        ...common,
        METRICS_PORT: String(apiMetricsPort),
        API_PORT: String(apiPort),
        DASHBOARD_PORT: String(dashboardPort),
        TOOLS_PORT: String(toolsPort),
      }),
    );
    if (outboundWorker)
      procs.push(
        spawnProcess(entry(mode, 'temporal/outbound-worker-main'), {
          ...common,
          METRICS_PORT: String(outboundWorkerMetricsPort),
        }),
      );
    // A worker's metrics listener opens once Worker.create has succeeded (bundle loaded, connected).
    await Promise.all([
      waitForPort('127.0.0.1', apiPort, 300_000),
      waitForPort('127.0.0.1', workerMetricsPort, 300_000),
      ...(outboundWorker ? [waitForPort('127.0.0.1', outboundWorkerMetricsPort, 300_000)] : []),
    ]);
  } catch (e) {
    const out = stderr();
    await stop();
    throw new Error(`${(e as Error).message}\n${out}`, { cause: e });
  }
  const dashboardUrl = `http://127.0.0.1:${dashboardPort}`;
  return {
    apiUrl: `http://127.0.0.1:${apiPort}`,
    dashboardUrl,
    apiMetricsPort,
    workerMetricsPort,
    ...(outboundWorker ? { outboundWorkerMetricsPort } : {}),
    taskQueue,
    tenant,
    publishableKey,
    async checkout(appUserId) {
      const res = await fetch(`${emulators.psp_a.url}/__control/checkout`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          sku: 'pro_monthly',
          email: `${appUserId}@example.com`,
          target: `${dashboardUrl}/api/webhooks/psp_a`,
          account: acct.account,
          mode: 'test',
          app_user_id: appUserId,
        }),
      });
      return res.json();
    },
    stop,
    stderr,
    workerStderr: () => procs[0].stderr(),
  };
}

/** One scrape of a process's /metrics. */
export async function scrape(port: number): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  if (res.status !== 200) throw new Error(`GET /metrics answered ${res.status}`);
  return res.text();
}

/** The value of one sample (`name{labels}`), labels matched as a subset; undefined when absent. */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  let total: number | undefined;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const m = /^([^{ ]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) total = (total ?? 0) + Number(m[3]);
  }
  return total;
}
