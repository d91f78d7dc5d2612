/**
 * Benchmark: RevenueCat's customer info, `GET /revenuecat/v1/subscribers/{id}` (an `rcb_…` key),
 * against our own SDK's premium check, `GET /v1/sdk/subscribers/{id}` (a `pk_live_…` key), on
 * the same api process and the same rows, side by side in one run. Aim (issue 44): the
 * RevenueCat path at ≥ 0.9× our own SDK endpoint's throughput.
 *
 *   npm run -s bench:revenuecat            (DATABASE_URL, or an embedded Postgres)
 *   BENCH_TENANTS=50 BENCH_ROUNDS=4 BENCH_SECONDS=2 BENCH_CONNECTIONS=32 BENCH_WRITE=0
 *
 * A throwaway database (bench/lib/db.ts: BENCH_TENANTS tenants, 50–100 entitlements each, most
 * live) gets an app per tenant with its publishable keys and a live web key in RevenueCat's
 * format. One api process runs with NODE_ENV=production and a throwaway MASTER_KEY. Each round
 * measures both endpoints at saturation (autocannon, BENCH_CONNECTIONS keep-alive connections,
 * BENCH_SECONDS each), the order alternating, requests rotating over every tenant and app user;
 * the client buckets are emptied of spend before each measurement so no limit is the ceiling.
 * The ratio is taken per round (neighbours in time on a shared, noisy machine), then the median.
 * The result replaces this bench's block in bench/RESULTS.md (BENCH_WRITE=0 to skip).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generatePublishableKey, generateRevenueCatKey, hashSecretKey } from '../db/key-material';
import { revenuecatKeyHint } from '../domain/revenuecat';
import { generateMasterKey } from '../vault/vault';
import { createBenchDatabase, freePort } from './lib/db';
import { cpuWindow } from './lib/cpu';
import { runAutocannon, type LoadResult, type RequestMaker } from './lib/load';
import { atInterrupt, startServer } from './lib/proc';
import { f0, f1, f2, machine, table } from './lib/report';
import { writeGeneratedBlock } from './lib/section';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const num = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);
const CFG = {
  tenants: num('BENCH_TENANTS', 50),
  rounds: num('BENCH_ROUNDS', 12),
  seconds: num('BENCH_SECONDS', 1),
  connections: num('BENCH_CONNECTIONS', 32),
  write: process.env.BENCH_WRITE !== '0',
};
const log = (m: string) => process.stderr.write(`[bench:revenuecat ${new Date().toISOString().slice(11, 19)}] ${m}\n`);
const loadavg = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const t0 = Date.now();
const loadBefore = loadavg();
const bench = await createBenchDatabase({ tenants: CFG.tenants, log });
const forget = atInterrupt(() => bench.drop());
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'billing-bench-rc-'));
try {
  // Every tenant gets an app (its publishable keys) and a live web key in RevenueCat's format.
  const keys = new Map<string, { pk: string; rc: string; users: string[] }>();
  for (const t of bench.tenants) {
    const pk = generatePublishableKey('live');
    const [app] = await bench
      .db('apps')
      .insert({
        tenant_id: t.id,
        name: 'bench',
        publishable_key_test: generatePublishableKey('test'),
        publishable_key_live: pk,
      })
      .returning('id');
    const rc = generateRevenueCatKey('web', 'live');
    await bench.db('revenuecat_keys').insert({
      tenant_id: t.id,
      app_id: app.id,
      platform: 'web',
      mode: 'live',
      key_hash: hashSecretKey(rc),
      key_hint: revenuecatKeyHint(rc),
    });
    const users = (await bench.db('entitlements').where({ tenant_id: t.id }).distinct('app_user_id')).map(
      (r: { app_user_id: string }) => r.app_user_id,
    );
    keys.set(t.id, { pk, rc, users });
  }
  await bench.db.raw('analyze');
  const calls = bench.tenants.flatMap((t) => keys.get(t.id)!.users.map((u) => ({ ...keys.get(t.id)!, user: u })));
  // Spread consecutive requests over tenants and users alike.
  for (let i = calls.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [calls[i], calls[j]] = [calls[j], calls[i]];
  }
  const makers: Record<'sdk' | 'revenuecat', RequestMaker> = {
    sdk: (i) => {
      const c = calls[i % calls.length];
      return { path: `/v1/sdk/subscribers/${c.user}`, headers: { authorization: `Bearer ${c.pk}` } };
    },
    revenuecat: (i) => {
      const c = calls[i % calls.length];
      return { path: `/revenuecat/v1/subscribers/${c.user}`, headers: { authorization: `Bearer ${c.rc}` } };
    },
  };

  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'production',
    METRICS_PORT: '0',
    LOG_LEVEL: 'info',
    MASTER_KEY: generateMasterKey(),
    STORE_ANDROID_PUSH_SERVICE_ACCOUNT: 'bench-push@bench.iam.gserviceaccount.com',
    // Named, so its Postgres backends' CPU is counted with it (bench/lib/cpu.ts).
    DATABASE_URL: (() => {
      const u = new URL(bench.url);
      u.searchParams.set('application_name', 'bench_rc_api');
      return u.toString();
    })(),
    API_PORT: String(port),
    DASHBOARD_PORT: String(await freePort()),
    TOOLS_PORT: String(await freePort()),
  };
  delete env.TEMPORAL_ADDRESS; // the reads never touch the engine
  const api = await startServer({ cwd: ROOT, script: 'api/main.ts', env, port, logFile: path.join(tmp, 'api.log') });
  const url = `http://127.0.0.1:${port}`;
  // Spend emptied, and the bucket rows' dead versions vacuumed: the bench's Postgres may run without
  // autovacuum (the CI configuration), and every request updates a few hot bucket rows.
  const emptySpend = async () => {
    await bench.db('client_rate_limit_buckets').del();
    await bench.db.raw('vacuum analyze client_rate_limit_buckets');
  };
  try {
    // Both answer 200 and agree on who is premium (the same rows, one rule).
    for (let i = 0; i < 20; i++) {
      const [a, b] = await Promise.all(
        (['sdk', 'revenuecat'] as const).map(async (k) => {
          const r = makers[k](i);
          const res = await fetch(url + r.path, { headers: r.headers });
          if (res.status !== 200) throw new Error(`${k} ${r.path}: ${res.status} ${await res.text()}`);
          return res.json() as Promise<Record<string, any>>;
        }),
      );
      const rcActive = Object.values(b.subscriber.entitlements as Record<string, { expires_date: string | null }>).some(
        (e) => e.expires_date === null || Date.parse(e.expires_date) > Date.now(),
      );
      if (a.is_premium !== rcActive) throw new Error(`premium differs for ${makers.sdk(i).path}`);
    }
    log('warm-up');
    for (const k of ['sdk', 'revenuecat'] as const) {
      await emptySpend();
      await runAutocannon({ url, make: makers[k], connections: CFG.connections, durationS: 1.5 });
    }
    type Measured = LoadResult & { cpuUs: number };
    const CORES = os.availableParallelism?.() ?? os.cpus().length;
    /** Saturation for BENCH_SECONDS, with the CPU the api process and its Postgres backends spent per request. */
    const measure = async (k: 'sdk' | 'revenuecat'): Promise<Measured> => {
      await emptySpend();
      const close = await cpuWindow(api.pid, () => bench.backendPids('bench_rc_api'), CORES);
      const load = await runAutocannon({ url, make: makers[k], connections: CFG.connections, durationS: CFG.seconds });
      await new Promise((r) => setTimeout(r, 200)); // what was in flight finishes inside the window
      const cpu = await close();
      return { ...load, cpuUs: ((cpu.serverMs + cpu.postgresMs) * 1000) / Math.max(1, load.sent) };
    };
    const rounds: { round: number; sdk: Measured; revenuecat: Measured; load: string }[] = [];
    for (let round = 0; round < CFG.rounds; round++) {
      const order = round % 2 ? (['revenuecat', 'sdk'] as const) : (['sdk', 'revenuecat'] as const);
      const got = {} as Record<'sdk' | 'revenuecat', Measured>;
      for (const k of order) got[k] = await measure(k);
      rounds.push({ round: round + 1, ...got, load: loadavg() });
      log(
        `round ${round + 1}: sdk ${f0(got.sdk.rps)} req/s ${f0(got.sdk.cpuUs)} µs, revenuecat ${f0(got.revenuecat.rps)} req/s ${f0(got.revenuecat.cpuUs)} µs (${f2(got.revenuecat.rps / got.sdk.rps)}×), load ${loadavg()}`,
      );
    }
    const ratio = median(rounds.map((r) => r.revenuecat.rps / r.sdk.rps));
    const cpuRatio = median(rounds.map((r) => r.sdk.cpuUs / r.revenuecat.cpuUs));
    const cpuOf = (k: 'sdk' | 'revenuecat') => median(rounds.map((r) => r[k].cpuUs));
    const non2xx = rounds.reduce(
      (n, r) => n + r.sdk.non2xx + r.revenuecat.non2xx + r.sdk.errors + r.revenuecat.errors,
      0,
    );
    const m = machine(bench.pgVersion);
    const body = `${m.date}; ${m.nproc} cores (${m.cpuModel}), Node ${m.node}, PostgreSQL ${m.postgres}${bench.embedded ? ' (embedded)' : ''} on the same host; load average ${loadBefore} before, ${m.loadavg} after. The machine is shared with other jobs and noisy: read the per-round ratios, measured between neighbours in time, before the absolute rates.
\`npm run -s bench:revenuecat\` · ${((Date.now() - t0) / 1000).toFixed(0)} s · ${bench.tenants.length} tenants, ${calls.length} app users (${bench.entitlements} entitlements, 50–100 a tenant, most live), live keys; one api process (NODE_ENV=production, LOG_LEVEL=info); autocannon, ${CFG.connections} keep-alive connections, ${CFG.seconds} s per endpoint per round (${CFG.rounds} rounds), the order alternating; client buckets emptied of spend before each. Non-2xx over the run: ${non2xx}.

${table(
  [
    'round',
    'GET /v1/sdk/subscribers/{id} req/s',
    'p50 / p99 ms',
    'CPU µs/req',
    'GET /revenuecat/v1/subscribers/{id} req/s',
    'p50 / p99 ms',
    'CPU µs/req',
    'ratio (req/s)',
    'load average after',
  ],
  rounds.map((r) => [
    r.round,
    f0(r.sdk.rps),
    `${f1(r.sdk.p50)} / ${f1(r.sdk.p99)}`,
    f0(r.sdk.cpuUs),
    f0(r.revenuecat.rps),
    `${f1(r.revenuecat.p50)} / ${f1(r.revenuecat.p99)}`,
    f0(r.revenuecat.cpuUs),
    f2(r.revenuecat.rps / r.sdk.rps),
    r.load,
  ]),
)}

**RevenueCat's customer info at ${f2(ratio)}× our SDK endpoint's throughput** (median of the rounds' ratios); aim ≥ 0.9×: **${ratio >= 0.9 ? 'met' : 'not met'}**. By CPU per request (the api process and its Postgres backends, steadier than req/s when other jobs take the cores): ${f0(cpuOf('sdk'))} µs ours, ${f0(cpuOf('revenuecat'))} µs RevenueCat's, **${f2(cpuRatio)}×** (ours ÷ RevenueCat's, median of the rounds). Both answer from one tenant read of two statements after the key and the client buckets: ours, the access rows (db/subscriptions.ts \`readAccessRows\`) and the subscriptions' statuses; RevenueCat's, the app user's aliases with when they were first seen, then the same access statement for the id and its aliases (each row with its product's catalogue facts); its body is larger.`;
    log(`median ratio ${f2(ratio)}×`);
    if (CFG.write)
      writeGeneratedBlock(
        path.join(ROOT, 'bench/RESULTS.md'),
        'bench/revenuecat-subscriber.ts',
        '## RevenueCat’s customer info against our SDK’s premium check',
        body,
      );
    else process.stdout.write(`${body}\n`);
  } finally {
    await api.stop();
  }
} finally {
  forget();
  await bench.drop();
  fs.rmSync(tmp, { recursive: true, force: true });
}
