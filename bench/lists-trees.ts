/**
 * Two trees' api processes side by side on the list endpoints: this tree and another checkout
 * (say the commit before a refactor), each on its own throwaway database made by its own
 * migrations and seeded alike, measured in one run with their rounds interleaved (and the floor
 * server's, for the ratio bench/api-lists.ts reports). For each measurement: req/s at
 * saturation and the CPU per request of the api process and of its Postgres backends (/proc),
 * which is steadier than req/s on a shared machine.
 *
 *   npx tsx bench/lists-trees.ts --other /path/to/other/checkout [--profile]
 *   BENCH_TENANTS=200 BENCH_ROUNDS=5 BENCH_SECONDS=2 BENCH_CONNECTIONS=32
 *   BENCH_ENDPOINTS=/v1/webhook-endpoints,/v1/coupons
 *   BENCH_RATE=400   (open loop at that rate instead of saturation: CPU per request at a fixed load)
 *
 * `--profile` runs both api processes under `node --cpu-prof` and prints, per endpoint, the self
 * and inclusive time per request of every function whose share differs between the trees (only
 * the samples inside each tree's measurements count). The other checkout needs its own
 * node_modules. Prints markdown; writes nothing to bench/RESULTS.md.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { BenchDatabase } from './lib/db';
import { runAutocannon, runPaced, type LoadResult, type RequestMaker } from './lib/load';
import { cpuWindow } from './lib/cpu';
import { atInterrupt, benchServerEnv, startServer, type ServerHandle } from './lib/proc';
import { f0, f1, f2, machine, table } from './lib/report';
import { seedLists } from './lib/list-seed';
import { generateMasterKey } from '../vault/vault';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const num = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);
const { values: args } = parseArgs({
  options: { other: { type: 'string' }, profile: { type: 'boolean', default: false } },
});
if (!args.other) throw new Error('--other <checkout> is required');
const OTHER = path.resolve(args.other);
const CFG = {
  tenants: num('BENCH_TENANTS', 200),
  rounds: num('BENCH_ROUNDS', 5),
  seconds: num('BENCH_SECONDS', 2),
  connections: num('BENCH_CONNECTIONS', 32),
  rate: num('BENCH_RATE', 0),
  endpoints: (
    process.env.BENCH_ENDPOINTS ??
    '/v1/webhook-endpoints,/v1/coupons,/v1/audit,/v1/products,/v1/providers,/v1/entitlements'
  ).split(','),
};
const log = (m: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${m}\n`);
const MASTER_KEY = generateMasterKey();
const nowUs = () => Number(process.hrtime.bigint() / 1000n);

type Kind = 'floor' | 'other' | 'this';
interface Proc {
  kind: Kind;
  handle: ServerHandle;
  url: string;
  db: BenchDatabase;
  app: string;
  profileDir?: string;
}

async function start(kind: Kind, tree: string, db: BenchDatabase, tmp: string): Promise<Proc> {
  const { freePort } = await import('./lib/db');
  const port = await freePort();
  const app = `bench_trees_${kind}`;
  const u = new URL(db.url);
  u.searchParams.set('application_name', app);
  const env = await benchServerEnv(kind === 'floor' ? 'floor' : 'api', port, {
    LOG_LEVEL: 'info',
    MASTER_KEY,
    DATABASE_URL: u.toString(),
  });
  const profileDir = args.profile && kind !== 'floor' ? fs.mkdtempSync(path.join(tmp, `prof-${kind}-`)) : undefined;
  const handle = await startServer({
    cwd: tree,
    script: kind === 'floor' ? 'bench/floor-server.ts' : 'api/main.ts',
    env,
    port,
    logFile: path.join(tmp, `${kind}.log`),
    nodeArgs: profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, '--cpu-prof-interval=100'] : [],
  });
  return { kind, handle, url: `http://127.0.0.1:${port}`, db, app, profileDir };
}

const median = (xs: number[]) => {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
  if (!s.length) return NaN;
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const range = (xs: number[], f: (x: number) => string) =>
  `${f(Math.min(...xs.filter(Number.isFinite)))}–${f(Math.max(...xs.filter(Number.isFinite)))}`;

interface Sample {
  load: LoadResult;
  serverUs: number;
  pgUs: number;
  fromUs: number;
  toUs: number;
}

async function main() {
  const t0 = Date.now();
  const loadBefore = os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-trees-'));
  // Each tree's database is made by that tree's own migrations.
  const mk = async (tree: string) =>
    ((await import(path.join(tree, 'bench/lib/db.ts'))) as typeof import('./lib/db')).createBenchDatabase({
      tenants: CFG.tenants,
      log,
    });
  const dbThis = await mk(ROOT);
  const dbOther = await mk(OTHER);
  const procs: Proc[] = [];
  const cleanup = async () => {
    await Promise.all(procs.map((p) => p.handle.stop().catch(() => {})));
    await dbThis.drop();
    await dbOther.drop();
  };
  const release = atInterrupt(cleanup);
  try {
    await seedLists(dbThis);
    await seedLists(dbOther);
    log('seeded both databases');
    procs.push(await start('floor', ROOT, dbThis, tmp));
    procs.push(await start('other', OTHER, dbOther, tmp));
    procs.push(await start('this', ROOT, dbThis, tmp));
    const make = (p: Proc, ep: string): RequestMaker => {
      const ts = p.db.tenants;
      const none: Record<string, string> = {};
      return (i) =>
        p.kind === 'floor'
          ? { path: `/lists${ep}?limit=50&tenant=${ts[i % ts.length].id}`, headers: none }
          : { path: `${ep}?limit=50`, headers: { authorization: `Bearer ${ts[i % ts.length].key}` } };
    };
    const measure = async (p: Proc, ep: string, s: number): Promise<Sample> => {
      await p.db.refillBuckets();
      const close = await cpuWindow(p.handle.pid, () => p.db.backendPids(p.app), 2);
      const fromUs = nowUs();
      const load = CFG.rate
        ? await runPaced({ url: p.url, make: make(p, ep), rate: CFG.rate, durationS: s })
        : await runAutocannon({ url: p.url, make: make(p, ep), connections: CFG.connections, durationS: s });
      const toUs = nowUs();
      const w = await close();
      return {
        load,
        serverUs: (w.serverMs * 1000) / load.sent,
        pgUs: (w.postgresMs * 1000) / load.sent,
        fromUs,
        toUs,
      };
    };
    for (const ep of CFG.endpoints) {
      for (const p of procs.slice(1)) {
        const t = p.db.tenants[0];
        const res = await fetch(`${p.url}${ep}?limit=50`, { headers: { authorization: `Bearer ${t.key}` } });
        const body = await res.text();
        if (res.status !== 200) throw new Error(`${p.kind} ${ep}: ${res.status} ${body.slice(0, 300)}`);
      }
      for (const p of procs) await measure(p, ep, 2);
    }
    const got: Record<string, Record<Kind, Sample[]>> = {};
    for (const ep of CFG.endpoints) got[ep] = { floor: [], other: [], this: [] };
    for (let round = 0; round < CFG.rounds; round++) {
      log(`round ${round + 1}/${CFG.rounds}`);
      for (const [j, ep] of CFG.endpoints.entries()) {
        // Rotate the order, so neither tree always follows the floor.
        const k = (round + j) % 3;
        for (const p of [...procs.slice(k), ...procs.slice(0, k)])
          got[ep][p.kind].push(await measure(p, ep, CFG.seconds));
      }
    }
    const loadAfter = os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' ');
    const mach = machine(dbThis.pgVersion);
    const rows = CFG.endpoints.map((ep) => {
      const g = got[ep];
      const ratio = (k: Kind) => g[k].map((s, i) => s.load.rps / g.floor[i].load.rps);
      const cpu = (k: Kind) => g[k].map((s) => s.serverUs);
      const paired = g.this.map((s, i) => s.serverUs - g.other[i].serverUs);
      return [
        `GET ${ep}`,
        `${f2(median(ratio('other')))} (${range(ratio('other'), f2)})`,
        `${f2(median(ratio('this')))} (${range(ratio('this'), f2)})`,
        `${f0(median(cpu('other')))} (${range(cpu('other'), f0)})`,
        `${f0(median(cpu('this')))} (${range(cpu('this'), f0)})`,
        `${f0(median(paired))} (${range(paired, f0)})`,
        `${f0(median(g.other.map((s) => s.pgUs)))} / ${f0(median(g.this.map((s) => s.pgUs)))}`,
        f0(median(g.floor.map((s) => s.load.rps))),
        g.other.concat(g.this).reduce((a, s) => a + s.load.non2xx + s.load.errors, 0),
      ];
    });
    const md = `Run: ${mach.date} · \`npx tsx bench/lists-trees.ts --other ${OTHER}${args.profile ? ' --profile' : ''}\` · ${((Date.now() - t0) / 1000).toFixed(0)} s
Machine: ${mach.nproc} CPUs (${mach.cpuModel}), node ${mach.node}, PostgreSQL ${mach.postgres}; load average before ${loadBefore}, after ${loadAfter}.
${CFG.tenants} tenants per database; ${CFG.rate ? `open loop at ${CFG.rate} req/s` : `autocannon ${CFG.connections} connections`}, ${CFG.seconds} s per measurement, ${CFG.rounds} rounds, floor / other / this rotated within each round.

${table(
  [
    'endpoint',
    'other ÷ floor',
    'this ÷ floor',
    'other api µs/req',
    'this api µs/req',
    'this − other, paired',
    'PG µs/req other / this',
    'floor req/s',
    'non-2xx',
  ],
  rows,
  ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
)}`;
    process.stdout.write(`\n${md}\n`);
    if (args.profile) {
      await Promise.all(procs.map((p) => p.handle.stop()));
      procs.length = 0;
      for (const ep of CFG.endpoints) {
        const per = (k: 'other' | 'this', tree: string) => {
          const dir = path.join(
            tmp,
            fs.readdirSync(tmp).find((d) => d.startsWith(`prof-${k}-`))!,
          );
          const file = path.join(
            dir,
            fs.readdirSync(dir).find((f) => f.endsWith('.cpuprofile'))!,
          );
          const windows = got[ep][k].map((s) => [s.fromUs, s.toUs] as const);
          const reqs = got[ep][k].reduce((a, s) => a + s.load.sent, 0);
          return functionTimes(file, tree, windows, reqs);
        };
        const a = per('other', OTHER);
        const b = per('this', ROOT);
        process.stdout.write(`\n### ${ep}: profile, µs per request (other → this)\n\n`);
        process.stdout.write(`busy: ${f1(a.busy)} → ${f1(b.busy)}\n\n`);
        for (const which of ['self', 'total'] as const) {
          const keys = new Set([...a[which].keys(), ...b[which].keys()]);
          const diff = [...keys]
            .map((k) => [k, a[which].get(k) ?? 0, b[which].get(k) ?? 0] as const)
            .sort((x, y) => Math.abs(y[2] - y[1]) - Math.abs(x[2] - x[1]))
            .slice(0, 40);
          process.stdout.write(
            `${which}:\n\n${table(
              ['function', 'other', 'this', 'Δ'],
              diff.map(([k, x, y]) => [k, f1(x), f1(y), f1(y - x)]),
              ['l', 'r', 'r', 'r'],
            )}\n\n`,
          );
        }
      }
    }
  } finally {
    release();
    await cleanup();
    if (!args.profile) fs.rmSync(tmp, { recursive: true, force: true });
    else log(`profiles kept in ${tmp}`);
  }
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

/** Self and inclusive µs per request of each function, over the samples inside `windows`. */
function functionTimes(file: string, tree: string, windows: (readonly [number, number])[], requests: number) {
  const p = JSON.parse(fs.readFileSync(file, 'utf8')) as {
    nodes: ProfileNode[];
    startTime: number;
    samples: number[];
    timeDeltas: number[];
  };
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const key = (n: ProfileNode) => {
    let url = n.callFrame.url.replace(/^file:\/\//, '');
    const nm = url.lastIndexOf('/node_modules/');
    if (nm !== -1) url = url.slice(nm + 1);
    else if (url.startsWith(tree)) url = path.relative(tree, url);
    return `${n.callFrame.functionName || '(anonymous)'}${url ? ` ${url}:${n.callFrame.lineNumber + 1}` : ''}`;
  };
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  let busy = 0;
  let t = p.startTime;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i];
    const dt = i + 1 < p.timeDeltas.length ? p.timeDeltas[i + 1] : 0;
    if (!windows.some(([a, b]) => t >= a && t <= b)) continue;
    const leaf = byId.get(p.samples[i])!;
    if (leaf.callFrame.functionName === '(idle)') continue;
    busy += dt;
    self.set(key(leaf), (self.get(key(leaf)) ?? 0) + dt);
    const seen = new Set<string>();
    for (let id: number | undefined = leaf.id; id !== undefined; id = parent.get(id)) {
      const k = key(byId.get(id)!);
      if (seen.has(k)) continue;
      seen.add(k);
      total.set(k, (total.get(k) ?? 0) + dt);
    }
  }
  const per = (m: Map<string, number>) => new Map([...m].map(([k, v]) => [k, v / requests]));
  return { busy: busy / requests, self: per(self), total: per(total) };
}

main().catch((e) => {
  log(`failed: ${e?.stack ?? e}`);
  process.exit(1);
});
