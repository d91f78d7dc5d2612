/**
 * Benchmark: every list endpoint of /v1 on the real api process against its floor
 * (bench/floor-server.ts, `/lists/v1/<list>`: the same page statement on a raw pg.Pool, the tenant
 * filtered by hand, no auth, rate limit, RLS, logging or serializer), in one run.
 *
 *   npm run bench            (after bench/api-entitlements.ts)
 *   npx tsx bench/api-lists.ts
 *   BENCH_TENANTS=200 BENCH_ROUNDS=3 BENCH_SECONDS=1.5 BENCH_CONNECTIONS=32 BENCH_WRITE=0
 *
 * A throwaway database (bench/lib/db.ts: products and entitlements) gets, per tenant, 50 rows
 * in every other listed table (subscriptions, coupons with counterparts, audit entries, inbound
 * webhook deliveries, outbound events and deliveries, sync events) and 3 webhook endpoints and
 * 3 provider connections. Each request asks for limit=50 of a tenant that rotates over all.
 *
 * The machine is shared and noisy, so the two are measured interleaved: for each round and each
 * endpoint, the floor and the api at saturation (autocannon, BENCH_CONNECTIONS keep-alive
 * connections, BENCH_SECONDS each; which one goes first alternates), the ratio taken between
 * those neighbours, then the median over rounds. Buckets are refilled before each measurement, so
 * the per-tenant rate limit is never the ceiling. Written into bench/RESULTS.md as its own section.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createBenchDatabase, freePort, type BenchDatabase } from './lib/db';
import { seedLists } from './lib/list-seed';
import { runAutocannon, type LoadResult } from './lib/load';
import { atInterrupt, benchServerEnv, startServer, type ServerHandle } from './lib/proc';
import { f0, f1, f2, machine, table } from './lib/report';
import { generateMasterKey } from '../vault/vault';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const num = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);
const CFG = {
  tenants: num('BENCH_TENANTS', 200),
  rounds: num('BENCH_ROUNDS', 3),
  seconds: num('BENCH_SECONDS', 1.5),
  connections: num('BENCH_CONNECTIONS', 32),
  write: process.env.BENCH_WRITE !== '0',
};
const ENDPOINTS = [
  '/v1/entitlements',
  '/v1/products',
  '/v1/subscribers',
  '/v1/coupons',
  '/v1/audit',
  '/v1/webhooks',
  '/v1/webhook-endpoints',
  '/v1/outbound-events',
  '/v1/outbound-deliveries',
  '/v1/sync/events',
  '/v1/providers',
];
const log = (m: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${m}\n`);
const MASTER_KEY = generateMasterKey();

interface Proc {
  name: string;
  handle: ServerHandle;
  url: string;
}

async function start(kind: 'api' | 'floor', db: BenchDatabase, tmp: string): Promise<Proc> {
  const port = await freePort();
  const u = new URL(db.url);
  u.searchParams.set('application_name', `bench_lists_${kind}`);
  const env = await benchServerEnv(kind, port, {
    LOG_LEVEL: 'info',
    MASTER_KEY,
    DATABASE_URL: u.toString(),
  });
  const handle = await startServer({
    cwd: ROOT,
    script: kind === 'api' ? 'api/main.ts' : 'bench/floor-server.ts',
    env,
    port,
    logFile: path.join(tmp, `${kind}.log`),
  });
  return { name: kind, handle, url: `http://127.0.0.1:${port}` };
}

const median = (xs: number[]) => {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
  if (!s.length) return NaN;
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

async function main() {
  const t0 = Date.now();
  const loadBefore = os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-lists-'));
  const db = await createBenchDatabase({ tenants: CFG.tenants, log });
  const procs: Proc[] = [];
  const cleanup = async () => {
    await Promise.all(procs.map((p) => p.handle.stop().catch(() => {})));
    await db.drop();
  };
  const release = atInterrupt(cleanup);
  try {
    await seedLists(db);
    log('seeded every list');
    const floor = await start('floor', db, tmp);
    procs.push(floor);
    const api = await start('api', db, tmp);
    procs.push(api);
    const n = db.tenants.length;
    const make =
      (kind: 'api' | 'floor', ep: string) =>
      (i: number): { path: string; headers: Record<string, string> } =>
        kind === 'floor'
          ? { path: `/lists${ep}?limit=50&tenant=${db.tenants[i % n].id}`, headers: {} }
          : { path: `${ep}?limit=50`, headers: { authorization: `Bearer ${db.tenants[i % n].key}` } };
    const measure = async (kind: 'api' | 'floor', ep: string, s: number): Promise<LoadResult> => {
      await db.refillBuckets();
      return runAutocannon({
        url: kind === 'api' ? api.url : floor.url,
        make: make(kind, ep),
        connections: CFG.connections,
        durationS: s,
      });
    };
    // Warm-up: every endpoint on both (prepared statements, JIT), and a body size per endpoint.
    const bytes: Record<string, number> = {};
    for (const ep of ENDPOINTS) {
      const res = await fetch(`${api.url}${ep}?limit=50`, {
        headers: { authorization: `Bearer ${db.tenants[0].key}` },
      });
      const body = await res.text();
      if (res.status !== 200) throw new Error(`${ep}: ${res.status} ${body.slice(0, 300)}`);
      bytes[ep] = body.length;
      const rows = (JSON.parse(body) as { data: unknown[] }).data.length;
      if (!rows) log(`${ep}: the page is empty (not seeded?)`);
      await measure('floor', ep, 0.5);
      await measure('api', ep, 0.5);
    }
    const results: Record<string, { api: LoadResult[]; floor: LoadResult[]; ratio: number[] }> = {};
    for (const ep of ENDPOINTS) results[ep] = { api: [], floor: [], ratio: [] };
    for (let round = 0; round < CFG.rounds; round++) {
      log(`round ${round + 1}/${CFG.rounds}`);
      for (const [j, ep] of ENDPOINTS.entries()) {
        const order: ('api' | 'floor')[] = (round + j) % 2 ? ['api', 'floor'] : ['floor', 'api'];
        const got: Partial<Record<'api' | 'floor', LoadResult>> = {};
        for (const kind of order) got[kind] = await measure(kind, ep, CFG.seconds);
        results[ep].api.push(got.api!);
        results[ep].floor.push(got.floor!);
        results[ep].ratio.push(got.api!.rps / got.floor!.rps);
      }
    }
    const loadAfter = os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' ');
    const mach = machine(db.pgVersion);
    const rows = ENDPOINTS.map((ep) => {
      const r = results[ep];
      const ratio = median(r.ratio);
      const bad = [...r.api, ...r.floor].reduce((k, x) => k + x.non2xx + x.errors, 0);
      return [
        `GET ${ep}`,
        `**${f2(ratio)}×**${ratio < 0.8 ? ' (under 0.8)' : ''}`,
        r.ratio.map(f2).join(' / '),
        f0(median(r.floor.map((x) => x.rps))),
        f0(median(r.api.map((x) => x.rps))),
        f1(median(r.floor.map((x) => x.p50))),
        f1(median(r.api.map((x) => x.p50))),
        f1(median(r.api.map((x) => x.p99))),
        f1(bytes[ep] / 1024),
        bad,
      ];
    });
    const md = `Run: ${mach.date} · \`npx tsx bench/api-lists.ts\` · ${((Date.now() - t0) / 1000).toFixed(0)} s
Machine: ${mach.nproc} CPUs (${mach.cpuModel}), node ${mach.node}, PostgreSQL ${mach.postgres} on the same host; load average before ${loadBefore}, after ${loadAfter}. Load generator, both servers, Postgres and other sessions' work share the CPUs.
Data: ${n} tenants; 50 rows per tenant in every list (3 webhook endpoints and 3 provider connections), ${db.entitlements} entitlements. Every request limit=50, tenants rotating; buckets refilled before every measurement.
Saturation: autocannon, ${CFG.connections} keep-alive connections, ${CFG.seconds} s per measurement; ${CFG.rounds} rounds, floor and api back to back per endpoint (order alternating). Ratio = api req/s ÷ floor req/s of the same round, median over rounds.

${table(
  [
    'endpoint',
    'api ÷ floor',
    'per round',
    'floor req/s',
    'api req/s',
    'floor p50 ms',
    'api p50 ms',
    'api p99 ms',
    'api body KiB',
    'non-2xx',
  ],
  rows,
  ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
)}`;
    process.stdout.write(`\n${md}\n`);
    if (CFG.write) writeListsSection(path.join(ROOT, 'bench', 'RESULTS.md'), md);
  } finally {
    release();
    await cleanup();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

const TITLE = '## Management API: every list endpoint against its floor (bench/api-lists.ts)';
const BEGIN = '<!-- bench/api-lists.ts: generated from here -->';
const END = '<!-- bench/api-lists.ts: generated up to here -->';

/** Replace this bench's generated block in bench/RESULTS.md (the section is created when missing). */
function writeListsSection(file: string, generated: string): void {
  const block = `${BEGIN}\n${generated.trim()}\n${END}`;
  let text = fs.readFileSync(file, 'utf8');
  const b = text.indexOf(BEGIN);
  const e = text.indexOf(END);
  if (b !== -1 && e > b) text = text.slice(0, b) + block + text.slice(e + END.length);
  else text = `${text.replace(/\s*$/, '')}\n\n${TITLE}\n\n${block}\n`;
  fs.writeFileSync(file, text);
}

main().catch((e) => {
  log(`failed: ${e?.stack ?? e}`);
  process.exit(1);
});
