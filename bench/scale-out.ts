/**
 * Scale-out variants side by side (issue #22): the same payment → premium load and the same
 * webhook ingest on
 *   dev      — the Temporal dev server (SQLite file, WAL), 1 worker, 1 api (as `npm start`);
 *   pg·1w    — Temporal's own server on PostgreSQL (4 history shards, one process), 1 worker, 1 api;
 *   pg·2w    — the same server, 2 worker processes on the task queue, 1 api;
 *   pg·2w·2a — the same, plus a second api process; webhooks alternate between the two
 *              (they share the outbox with SKIP LOCKED and the rate-limit buckets).
 * Both Temporal servers run for the whole bench; each variant's api and worker processes are
 * started for its turn and stopped after it; rounds alternate the order, and the ratios to
 * `dev` are taken within a round.
 *
 *   DATABASE_URL=… npx tsx bench/scale-out.ts [--rounds 2] [--rate 20] [--seconds 20] [--ingest-seconds 20] [--connections 16]
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Knex } from 'knex';
import { createConnection, markConnectionProven } from '../db/connection-service';
import { createKnex, withDatabase } from '../db/knex';
import { migrateLatest } from '../db/migrate';
import { createTenant } from '../db/tenants';
import { withTenant } from '../db/tenant-tx';
import { startAllEmulators } from '../emulators/registry';
import { freePort } from '../runtime/ports';
import { createEmulatorAccount } from '../seed/demo-providers';
import { createVault, generateMasterKey } from '../vault/vault';
import { ensureSearchAttributes } from '../temporal/client';
import { startDevServer } from '../temporal/dev-server';
import { dropDatabases, startPostgresTemporal } from '../temporal/postgres-server';
import { findTemporalServerBinaries } from '../temporal/server-binaries';
import { pidsCpu, systemCpu } from './lib/cpu';
import { captureCheckout, closedLoop, makeSender, type Sender } from './lib/ingest-load';
import { startServer, track, type ServerHandle } from './lib/proc';
import { f0, f1, f2, machine, table } from './lib/report';
import { runBench } from './lib/run';
import { quantile, writeResults } from './lib/webhook-stack';
import { arg } from './lib/args';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ROUNDS = Number(arg('rounds', '2'));
const RATE = Number(arg('rate', '20'));
const SECONDS = Number(arg('seconds', '20'));
const INGEST_SECONDS = Number(arg('ingest-seconds', '20'));
const CONNECTIONS = Number(arg('connections', '16'));
const SHARDS = Number(arg('shards', '4'));
const STUCK_MS = 300_000;
const log = (m: string) => console.log(`[scale-out] ${m}`);

interface Variant {
  name: string;
  temporal: 'dev' | 'pg';
  workers: number;
  apis: number;
  what: string;
}
const VARIANTS: Variant[] = [
  { name: 'dev', temporal: 'dev', workers: 1, apis: 1, what: 'dev server (SQLite, WAL), 1 worker, 1 api' },
  {
    name: 'pg·1w',
    temporal: 'pg',
    workers: 1,
    apis: 1,
    what: `Temporal on PostgreSQL (${SHARDS} shards, one process), 1 worker, 1 api`,
  },
  { name: 'pg·2w', temporal: 'pg', workers: 2, apis: 1, what: 'Temporal on PostgreSQL, 2 workers, 1 api' },
  { name: 'pg·2w·2a', temporal: 'pg', workers: 2, apis: 2, what: 'Temporal on PostgreSQL, 2 workers, 2 api replicas' },
];

interface Result {
  variant: string;
  round: number;
  p50: number;
  p99: number;
  stuck: number;
  lost: number;
  accepted: number;
  acceptedNon200: number;
  processing: number;
  drainS: number;
  /** CPU ms per processed event over the ingest phase + drain, by part. */
  cpu: Record<string, number>;
  otherLoadPct: number;
}

async function main() {
  const startedAt = Date.now();
  const m0 = machine('');
  const base = process.env.DATABASE_URL;
  if (!base) throw new Error('DATABASE_URL is required (a Postgres the bench can create scratch databases on)');
  const id = `${Date.now().toString(36)}_${crypto.randomBytes(2).toString('hex')}`;
  const dbName = `billing_bench_scale_${id}`;
  const temporalDb = `temporal_bench_${id}`;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'billing-scale-bench-'));
  const admin = createKnex(base, { max: 1 });
  await admin.raw(`create database "${dbName}"`);
  const url = withDatabase(base, dbName);
  const db = createKnex(url, { max: 4 });
  const binaries = findTemporalServerBinaries({ log });
  const stops: (() => Promise<unknown>)[] = [];
  const results: Result[] = [];
  let pgVersion: string;
  try {
    await migrateLatest(db);
    pgVersion = String((await db.raw('show server_version')).rows[0].server_version);
    const dev = await startDevServer({
      port: await freePort(),
      uiPort: null,
      dbFile: path.join(tmp, 'temporal.db'),
      logFile: path.join(tmp, 'temporal-dev.log'),
    });
    track(dev.process); // an interrupted bench leaves no dev server behind
    stops.push(() => dev.stop());
    await ensureSearchAttributes(dev.address, 'default', 20_000);
    stops.push(async () => dropDatabases(binaries, base, temporalDb));
    const pgt = await startPostgresTemporal({
      databaseUrl: base,
      database: temporalDb,
      numHistoryShards: SHARDS,
      dir: path.join(tmp, 'temporal-pg'),
      binaries,
      log,
    });
    stops.push(() => pgt.stop());
    const servers = {
      dev: { address: dev.address, pids: [dev.process.pid!], dbs: [] as string[] },
      pg: {
        address: pgt.address,
        pids: pgt.processes.map((p) => p.pid!),
        dbs: [temporalDb, `${temporalDb}_visibility`],
      },
    };

    const masterKey = generateMasterKey();
    const vault = createVault(masterKey);
    const emulators = await startAllEmulators(
      { emulatorPorts: {} as never, dataDir: '' },
      { persistent: false, anyPort: true },
    );
    stops.push(() => Promise.all(Object.values(emulators).map((e) => e.close())));
    const tenant = await createTenant(db, { name: 'scale-out bench' });
    const acct = await createEmulatorAccount(emulators.psp_a.url);
    await withTenant(db, tenant.tenant_id, async (trx) => {
      const conn = await createConnection(trx, vault, {
        provider: 'psp_a',
        account_ref: acct.account,
        credentials: acct.credentials,
        webhook_secret: acct.webhook_secret,
      });
      await markConnectionProven(trx, conn.id, 'control_api');
      await trx('products').insert({ tenant_id: tenant.tenant_id, sku: 'pro', name: 'Pro', tier: 'monthly' });
    });
    const bodies = await captureCheckout({ emulators, account: acct.account });
    if (bodies.length !== 3) throw new Error(`captured ${bodies.length} checkout events, expected 3`);
    const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS * 2 });
    stops.push(async () => agent.destroy());

    for (let round = 1; round <= ROUNDS; round++) {
      const order = round % 2 ? VARIANTS : [...VARIANTS].reverse();
      for (const v of order) {
        const server = servers[v.temporal];
        const taskQueue = `bench-${v.temporal}`;
        const env: NodeJS.ProcessEnv = {
          ...process.env,
          NODE_ENV: 'development',
          DATABASE_URL: url,
          TEMPORAL_ADDRESS: server.address,
          TEMPORAL_TASK_QUEUE: taskQueue,
          MASTER_KEY: masterKey,
          METRICS_PORT: '0',
          LOG_LEVEL: 'warn',
          DATA_DIR: tmp,
          PSP_A_API_BASE: emulators.psp_a.url,
        };
        log(`round ${round}: ${v.name} — starting ${v.apis} api, ${v.workers} worker process(es)`);
        const procs = await startProcesses(v, env, tmp);
        try {
          const tag = `${v.name.replace(/\W/g, '')}_${round}_${crypto.randomBytes(2).toString('hex')}`;
          // Warm-up: code loaded, pools filled, sticky caches in place.
          await premiumAtRate(
            { db, emulatorUrl: emulators.psp_a.url, account: acct.account, targets: procs.webhookUrls },
            5,
            3,
            `${tag}_w`,
          );
          const premium = await premiumAtRate(
            { db, emulatorUrl: emulators.psp_a.url, account: acct.account, targets: procs.webhookUrls },
            RATE,
            SECONDS,
            `${tag}_p`,
          );
          const lat = premium.latencies.sort((a, b) => a - b);
          log(
            `  premium ${RATE}/s: p50 ${f0(quantile(lat, 0.5))} p99 ${f0(quantile(lat, 0.99))} ms, stuck ${premium.stuck}`,
          );

          const senders = procs.webhookUrls.map((u) => makeSender(u, bodies, acct.webhook_secret, `${tag}_i`, agent));
          const sender: Sender = {
            send: (i) => senders[i % senders.length].send(i),
            eventId: senders[0].eventId,
            purchase: senders[0].purchase,
          };
          const cpuEnd = await cpuPhase(
            db,
            server.dbs,
            {
              'load generator + emulator': [process.pid],
              api: procs.apiPids,
              worker: procs.workerPids,
              'Temporal server': server.pids,
              'the other Temporal server (idle)': servers[v.temporal === 'dev' ? 'pg' : 'dev'].pids,
            },
            dbName,
          );
          const t0 = Date.now();
          const run = await closedLoop(sender, INGEST_SECONDS, 0, CONNECTIONS);
          // A provider redelivers what got no 200.
          let pending = run.notOk;
          for (let k = 0; pending.length && k < 20; k++) {
            const again: number[] = [];
            for (const i of pending) if ((await sender.send(i)) !== 200) again.push(i);
            pending = again;
          }
          const ids = [...run.ok, ...run.notOk].map(sender.eventId);
          const drainStart = Date.now();
          for (;;) {
            const left = Number((await db('webhook_deliveries').where({ status: 'received' }).count('* as n'))[0].n);
            if (left === 0 || Date.now() - drainStart > 15 * 60_000) break;
            await new Promise((r) => setTimeout(r, 500));
          }
          const processedAt = Date.now();
          const cpu = await cpuEnd();
          let processed = 0;
          for (let k = 0; k < ids.length; k += 5000)
            processed += Number(
              (
                await db('webhook_deliveries')
                  .whereIn('event_id', ids.slice(k, k + 5000))
                  .where({ status: 'processed' })
                  .count('* as n')
              )[0].n,
            );
          const accepted = run.ok.length / run.seconds;
          const processing = processed / ((processedAt - t0) / 1000);
          log(
            `  ingest: ${f0(accepted)}/s accepted, ${f1(processing)}/s processed (${processed} of ${ids.length}), drained ${f1((processedAt - drainStart) / 1000)} s after the load`,
          );
          const perEvent: Record<string, number> = {};
          for (const [k, ms] of Object.entries(cpu.parts)) perEvent[k] = ms / Math.max(1, processed);
          const ours = Object.values(cpu.parts).reduce((a, b) => a + b, 0);
          results.push({
            variant: v.name,
            round,
            p50: quantile(lat, 0.5),
            p99: quantile(lat, 0.99),
            stuck: premium.stuck,
            lost: ids.length - processed,
            accepted,
            acceptedNon200: run.notOk.length,
            processing,
            drainS: (processedAt - drainStart) / 1000,
            cpu: perEvent,
            otherLoadPct: (100 * (cpu.machineBusyMs - ours)) / cpu.wallMs,
          });
        } finally {
          await procs.stop();
        }
      }
    }
  } finally {
    for (const s of stops.reverse()) await s().catch((e) => log(`stop: ${e.message}`));
    await db.destroy();
    await admin.raw(`drop database if exists "${dbName}" with (force)`).catch((e) => log(`drop: ${e.message}`));
    await admin.destroy();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  const text = report(results, m0, pgVersion, startedAt);
  writeResults(
    'scale-out.ts',
    'Scale-out: dev server vs Temporal on PostgreSQL, workers and api replicas (bench/scale-out.ts)',
    text,
  );
  console.log(text);
}

/** The variant's api and worker processes, each its own `node --import tsx` (as `npm run api` / `npm run worker`). */
async function startProcesses(v: Variant, env: NodeJS.ProcessEnv, tmp: string) {
  const apis: ServerHandle[] = [];
  const webhookUrls: string[] = [];
  const workers: { pid: number; stop(): Promise<void> }[] = [];
  const stop = async () => {
    await Promise.all([...apis.map((a) => a.stop()), ...workers.map((w) => w.stop())]);
  };
  try {
    for (let i = 0; i < v.apis; i++) {
      const [apiPort, dashboardPort, toolsPort] = [await freePort(), await freePort(), await freePort()];
      apis.push(
        await startServer({
          cwd: ROOT,
          script: 'api/main.ts',
          env: {
            ...env,
            API_PORT: String(apiPort),
            DASHBOARD_PORT: String(dashboardPort),
            TOOLS_PORT: String(toolsPort),
          },
          port: dashboardPort,
          logFile: path.join(tmp, `api-${i}.log`),
          timeoutMs: 60_000,
        }),
      );
      webhookUrls.push(`http://127.0.0.1:${dashboardPort}/api/webhooks/psp_a`);
    }
    for (let i = 0; i < v.workers; i++) {
      const logFile = path.join(tmp, `worker-${i}.log`);
      const out = fs.openSync(logFile, 'w');
      const child = spawn(process.execPath, ['--import', 'tsx', 'temporal/worker-main.ts'], {
        cwd: ROOT,
        env: { ...env, LOG_LEVEL: 'info' },
        stdio: ['ignore', out, out],
      });
      fs.closeSync(out);
      track(child);
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      workers.push({
        pid: child.pid!,
        stop: async () => {
          if (child.exitCode !== null || child.signalCode !== null) return;
          child.kill('SIGTERM');
          const t = setTimeout(() => child.kill('SIGKILL'), 8000);
          await exited;
          clearTimeout(t);
        },
      });
      const deadline = Date.now() + 90_000;
      while (!fs.readFileSync(logFile, 'utf8').includes('worker started')) {
        if (child.exitCode !== null) throw new Error(`worker exited: ${fs.readFileSync(logFile, 'utf8').slice(-2000)}`);
        if (Date.now() > deadline) throw new Error('worker did not start within 90 s');
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  } catch (e) {
    await stop();
    throw e;
  }
  return { apiPids: apis.map((a) => a.pid), workerPids: workers.map((w) => w.pid), webhookUrls, stop };
}

/**
 * Open loop: a checkout due every 1/rate s (the emulator sends its three signed events, each after
 * the previous answer; checkouts alternate between the targets, as behind a load balancer); the
 * clock runs from when it was due to its entitlement committed active (a watcher reads them every
 * 20 ms). A non-200 is redelivered after 1 s and the wait counts.
 */
async function premiumAtRate(
  s: { db: Knex; emulatorUrl: string; account: string; targets: string[] },
  rate: number,
  seconds: number,
  tag: string,
) {
  const total = Math.round(rate * seconds);
  const t0 = performance.now();
  const waiting = new Map<string, (t: number) => void>();
  let watching = true;
  const watcher = (async () => {
    while (watching) {
      const pending = [...waiting.keys()];
      const rows: { app_user_id: string }[] = pending.length
        ? await s.db('entitlements').whereIn('app_user_id', pending).where({ state: 'active' }).select('app_user_id')
        : [];
      const now = performance.now();
      for (const r of rows) {
        waiting.get(r.app_user_id)?.(now);
        waiting.delete(r.app_user_id);
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  const post = async (p: string, body: unknown) =>
    (
      await fetch(`${s.emulatorUrl}/__control${p}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    ).json();
  const one = async (i: number): Promise<number | null> => {
    const due = t0 + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const user = `${tag}_${i}`;
    const target = s.targets[i % s.targets.length];
    const visible = new Promise<number | null>((r) => {
      waiting.set(user, r);
      setTimeout(() => r(null), STUCK_MS).unref();
    });
    const c = (await post('/checkout', {
      sku: 'pro',
      email: `${user}@example.com`,
      target,
      account: s.account,
      mode: 'test',
      app_user_id: user,
    })) as { events: { id: string; type: string; status: number }[] };
    for (const e of c.events) {
      let status = e.status;
      while (status !== 200 && performance.now() - due < STUCK_MS) {
        await new Promise((r) => setTimeout(r, 1000));
        status = (
          (await post('/events', {
            id: e.id,
            type: e.type,
            target: s.targets[(i + 1) % s.targets.length],
            account: s.account,
          })) as { status: number }
        ).status;
      }
    }
    const at = await visible;
    return at === null ? null : at - due;
  };
  const out = await Promise.all(Array.from({ length: total }, (_, i) => one(i)));
  watching = false;
  await watcher;
  return { latencies: out.filter((x): x is number => x !== null), stuck: out.filter((x) => x === null).length };
}

/** CPU by part over a phase (from /proc), Postgres backends by database: the app's and, for the PostgreSQL server, Temporal's. */
async function cpuPhase(db: Knex, temporalDbs: string[], groups: Record<string, number[]>, appDb: string) {
  const backends = async (names: string[]) =>
    names.length
      ? ((
          await db.raw('select pid from pg_stat_activity where datname = any(?) and pid <> pg_backend_pid()', [names])
        ).rows.map((r: { pid: number }) => r.pid) as number[])
      : [];
  const snapshot = async () => ({ app: await backends([appDb]), temporal: await backends(temporalDbs) });
  const b0 = await snapshot();
  const named = (b: { app: number[]; temporal: number[] }) => ({
    ...groups,
    'Postgres (app database)': b.app,
    "Postgres (Temporal's databases)": b.temporal,
  });
  const all0 = pidsCpu(Object.values(named(b0)).flat());
  const sys0 = systemCpu();
  const t0 = Date.now();
  return async () => {
    const b1 = await snapshot();
    const merged = named({
      app: [...new Set([...b0.app, ...b1.app])],
      temporal: [...new Set([...b0.temporal, ...b1.temporal])],
    });
    const all1 = pidsCpu(Object.values(merged).flat());
    const sys1 = systemCpu();
    const parts: Record<string, number> = {};
    // A backend that ended during the phase has no reading at its end: left out (its CPU is lost, not negative).
    for (const [name, pids] of Object.entries(merged))
      parts[name] = pids.reduce((k, p) => (all1.has(p) ? k + all1.get(p)! - (all0.get(p) ?? 0) : k), 0);
    return { parts, machineBusyMs: sys1.busyMs - sys0.busyMs, wallMs: Date.now() - t0 };
  };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  if (!s.length) return NaN;
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};

function report(results: Result[], m0: ReturnType<typeof machine>, pgVersion: string, startedAt: number): string {
  const byRound = (variant: string, round: number) => results.find((r) => r.variant === variant && r.round === round);
  const ratio = (variant: string, pick: (r: Result) => number) =>
    median(
      results
        .filter((r) => r.variant === variant)
        .map((r) => pick(r) / pick(byRound('dev', r.round)!))
        .filter(Number.isFinite),
    );
  const rows = VARIANTS.map((v) => {
    const rs = results.filter((r) => r.variant === v.name);
    // Ours only: the idle server of the other variant is listed in the CPU table, not counted here.
    const cpu = Object.keys(rs[0]?.cpu ?? {})
      .filter((n) => !n.includes('idle'))
      .reduce((k, name) => k + median(rs.map((r) => r.cpu[name])), 0);
    return [
      `**${v.name}**: ${v.what}`,
      `${f0(median(rs.map((r) => r.p50)))} / ${f0(median(rs.map((r) => r.p99)))}`,
      f2(ratio(v.name, (r) => r.p50)),
      rs.map((r) => r.stuck).reduce((a, b) => a + b, 0),
      f0(median(rs.map((r) => r.accepted))),
      f2(ratio(v.name, (r) => r.accepted)),
      `**${f1(median(rs.map((r) => r.processing)))}**`,
      `**${f2(ratio(v.name, (r) => r.processing))}**`,
      rs.map((r) => r.lost).reduce((a, b) => a + b, 0),
      f2(cpu),
      rs.map((r) => `${f0(r.p50)}·${f1(r.processing)}`).join(', '),
    ];
  });
  const cpuNames = [...new Set(results.flatMap((r) => Object.keys(r.cpu)))];
  const cpuRows = VARIANTS.map((v) => {
    const rs = results.filter((r) => r.variant === v.name);
    return [
      v.name,
      ...cpuNames.map((n) => f2(median(rs.map((r) => r.cpu[n] ?? 0)))),
      f0(median(rs.map((r) => r.otherLoadPct))) + '%',
    ];
  });
  return [
    `Run: ${m0.date} · \`npx tsx bench/scale-out.ts --rounds ${ROUNDS} --rate ${RATE} --seconds ${SECONDS} --ingest-seconds ${INGEST_SECONDS} --connections ${CONNECTIONS} --shards ${SHARDS}\` · ${f0((Date.now() - startedAt) / 1000)} s`,
    `Machine: ${m0.nproc} CPUs (${m0.cpuModel}), ${m0.memoryGiB} GiB RAM, node ${m0.node}, PostgreSQL ${pgVersion} on the same host (the app's database and Temporal's); load average at start ${m0.loadavg}, at the end ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(
        ' ',
      )}. Everything — load generator, emulator, api(s), worker(s), both Temporal servers, Postgres — and other people's work share the two cores.`,
    '',
    `Per variant and round: its api and worker processes started fresh; a warm-up of 15 checkouts; **payment → premium** at ${RATE} checkouts/s for ${SECONDS} s (open loop, from due to the entitlement committed active); then **ingest**: ${CONNECTIONS} keep-alive connections in a closed loop for ${INGEST_SECONDS} s of signed checkout events (cloned per purchase), then the drain. Processing = events the workflows applied / (load + drain time). ${ROUNDS} rounds, order reversed every other round; medians shown, ratios to \`dev\` taken within each round (median of the rounds).`,
    '',
    table(
      [
        'variant',
        `premium p50 / p99 ms at ${RATE}/s`,
        'p50 ÷ dev (< 1: faster)',
        'stuck',
        'ingest accepted/s',
        '÷ dev',
        'processing events/s',
        '÷ dev',
        'lost',
        'CPU ms per processed event (ours)',
        'rounds (p50 ms · processing/s)',
      ],
      rows,
      ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'l'],
    ),
    '',
    "CPU per processed event over the ingest phase and its drain (ms, from /proc; median of rounds), and other sessions' load (% of one core):",
    '',
    table(['variant', ...cpuNames, 'other sessions'], cpuRows),
  ].join('\n');
}

runBench(main);
