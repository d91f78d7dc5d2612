/**
 * Benchmark: authenticated `GET /v1/entitlements?limit=50` on the real api process, against a
 * floor (bench/floor-server.ts: a bare Koa route doing the same SQL query), in the same run.
 *
 *   npx tsx bench/api-entitlements.ts            (DATABASE_URL, or an embedded Postgres)
 *   BENCH_TENANTS=20 BENCH_ROUNDS=1 BENCH_STEP_ROUNDS=1 BENCH_PIECE_ROUNDS=1 BENCH_SCALE=0.3 \
 *     BENCH_PROFILE=0 BENCH_WRITE=0 npm run bench   (a ~1 min smoke run; nothing written)
 *
 * The servers run with NODE_ENV=production and a throwaway MASTER_KEY generated for the run.
 * Every process it starts is stopped when it ends, fails or is interrupted (bench/lib/proc.ts),
 * and its database is dropped.
 *
 * The machine is shared and noisy, so whatever is compared is measured *interleaved*: all servers
 * run at once and short measurements alternate between them over several rounds (the order
 * rotating each round); ratios and deltas are taken between neighbours of the same round, then
 * the median over rounds. Per-request CPU of the server and of its own Postgres backends (found
 * by application_name) is read from /proc.
 *
 * 0. A throwaway database billing_bench_<ts>: migrated; BENCH_TENANTS (500) tenants with 3 products
 *    and 50–100 entitlements each and one all-scope secret key each. Dropped at the end.
 * 1. Ours vs floor — the floor, the api at LOG_LEVEL=warn and the api at the default info —
 *    BENCH_ROUNDS (4) rounds of:
 *      A  open-loop paced at BENCH_RATE, by default half the floor's saturation measured after warm-up, 2 s, latency from when each request was due
 *         (no coordinated omission);
 *      L  the same at BENCH_LOW_RATE (200 req/s), 2 s: the request path's own latency, unloaded;
 *      A' autocannon overallRate BENCH_RATE, 1.5 s — the usual way, bursty (see bench/lib/load.ts);
 *      B  saturation: autocannon, BENCH_CONNECTIONS (64) keep-alive connections, 2.5 s.
 *    Requests rotate over all tenants' keys and every bucket is refilled before each measurement,
 *    so the per-tenant limit (120 burst, 1/s) is never the ceiling; any non-2xx is reported.
 * 2. Where the cost goes: floor variants adding one production piece at a time, the real api,
 *    and candidate changes (what-ifs; one is the real api with synchronous_commit=off on its
 *    connections), BENCH_STEP_ROUNDS (4) rounds of 1 s at saturation.
 * 3. V8 CPU profiles of the floor and of the api at saturation, self time grouped by package
 *    (BENCH_PROFILE=0 to skip).
 * 4. Summary printed and written into bench/RESULTS.md (BENCH_WRITE=0 to skip).
 * BENCH_SCALE (1) multiplies every measurement's duration.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuWindow, type CpuWindow } from './lib/cpu';
import { createBenchDatabase, freePort, type BenchDatabase } from './lib/db';
import { pool, runAutocannon, runPaced, type LoadResult } from './lib/load';
import { atInterrupt, benchServerEnv, startServer, type ServerHandle } from './lib/proc';
import { generateMasterKey } from '../vault/vault';
import { pieceKit, type Piece, type PieceResult } from './lib/pieces';
import { summariseProfile, type ProfileSummary } from './lib/profile';
import { f0, f1, f2, machine, table, writeSection } from './lib/report';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const num = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);
const SCALE = num('BENCH_SCALE', 1);
const CFG = {
  tenants: num('BENCH_TENANTS', 500),
  rounds: num('BENCH_ROUNDS', 4),
  /** A's offered rate: BENCH_RATE, or half the floor's saturation measured after warm-up (the issue's aim: p99 < 50 ms there). */
  rate: num('BENCH_RATE', 0),
  floorSat: 0,
  lowRate: num('BENCH_LOW_RATE', 200),
  stepRounds: num('BENCH_STEP_ROUNDS', 4),
  pieceRounds: num('BENCH_PIECE_ROUNDS', 3),
  pieceS: 0.8 * SCALE,
  profile: process.env.BENCH_PROFILE !== '0',
  pacedS: 2 * SCALE,
  lowS: 2 * SCALE,
  acRateS: 1.5 * SCALE,
  satS: 2.5 * SCALE,
  stepS: 1 * SCALE,
  profileS: 4 * SCALE,
  connections: num('BENCH_CONNECTIONS', 64),
  write: process.env.BENCH_WRITE !== '0',
};
const COMMAND = 'npx tsx bench/api-entitlements.ts';
const CORES = os.availableParallelism?.() ?? os.cpus().length;
const log = (m: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${m}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** The api runs as in production, which refuses to start without MASTER_KEY: a throwaway one, for this run only. */
const MASTER_KEY = generateMasterKey();

// ---------------------------------------------------------------- processes and targets

interface Proc {
  name: string;
  appName: string;
  handle: ServerHandle;
  url: string;
}

function dbUrl(db: BenchDatabase, appName: string, extra: Record<string, string> = {}): string {
  const u = new URL(db.url);
  u.searchParams.set('application_name', appName);
  for (const [k, v] of Object.entries(extra)) u.searchParams.set(k, v);
  return u.toString();
}

async function startProc(
  name: string,
  kind: 'api' | 'floor',
  db: BenchDatabase,
  tmp: string,
  opts: { logLevel: string; pgOptions?: string; nodeArgs?: string[] },
): Promise<Proc> {
  const appName = `bench_${name.replace(/\W+/g, '_')}`;
  const port = await freePort();
  const env = await benchServerEnv(kind, port, {
    LOG_LEVEL: opts.logLevel,
    MASTER_KEY,
    DATABASE_URL: dbUrl(db, appName, opts.pgOptions ? { options: opts.pgOptions } : {}),
  });
  const handle = await startServer({
    cwd: ROOT,
    script: kind === 'api' ? 'api/main.ts' : 'bench/floor-server.ts',
    env,
    port,
    logFile: path.join(tmp, `${appName}.log`),
    nodeArgs: opts.nodeArgs,
  });
  return { name, appName, handle, url: `http://127.0.0.1:${port}` };
}

async function stopProc(p: Proc): Promise<void> {
  await p.handle.stop();
  const lines = fs.readFileSync(p.handle.logFile, 'utf8').split('\n');
  const bad = lines.filter((l) => /"level":(4|5|6)0/.test(l) && !/listening/.test(l));
  if (bad.length) log(`${p.name}: ${bad.length} warn/error log lines, first: ${bad[0].slice(0, 400)}`);
}

/** Something to put load on: a process and the request shape (path + key) it answers. */
interface Target {
  name: string;
  proc: Proc;
  make: (i: number) => { path: string; headers: Record<string, string> };
  note?: string;
}

function target(name: string, proc: Proc, db: BenchDatabase, kind: 'api' | 'floor', steps = ''): Target {
  const n = db.tenants.length;
  const auth = db.tenants.map((t) => `Bearer ${t.key}`);
  const prefix = steps ? `/s/${steps}` : '';
  const paths =
    kind === 'api'
      ? db.tenants.map(() => '/v1/entitlements?limit=50')
      : db.tenants.map((t) => `${prefix}/v1/entitlements?limit=50&tenant=${t.id}`);
  return { name, proc, make: (i) => ({ path: paths[i % n], headers: { authorization: auth[i % n] } }) };
}

async function sanityCheck(t: Target): Promise<number> {
  const r = t.make(0);
  const res = await fetch(t.proc.url + r.path, { headers: r.headers });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${t.name}: sanity request answered ${res.status}: ${text.slice(0, 300)}`);
  const body = JSON.parse(text) as { data: unknown[] };
  if (body.data.length !== 50) throw new Error(`${t.name}: expected 50 rows, got ${body.data.length}`);
  return Buffer.byteLength(text);
}

// ---------------------------------------------------------------- measuring

interface Measured {
  load: LoadResult & { unfinished?: number; serviceP50?: number; serviceP99?: number };
  cpu: CpuWindow;
  logBytesPerReq: number;
}

type Phase = { key: string; label: string; run: (t: Target) => Promise<LoadResult>; drainMs: number };

const saturation = (sec: number) => (t: Target) =>
  runAutocannon({ url: t.proc.url, make: t.make, connections: CFG.connections, durationS: sec });
const paced = (rate: number, sec: number) => (t: Target) =>
  runPaced({ url: t.proc.url, make: t.make, rate, durationS: sec, graceS: 1 });

/** Filled once the floor's saturation is known (the A rates follow it): see main(). */
let PHASES: Phase[] = [];
const phases = (): Phase[] => [
  { key: 'A', label: `A paced ${CFG.rate}/s`, run: paced(CFG.rate, CFG.pacedS), drainMs: 700 },
  { key: 'L', label: `L paced ${CFG.lowRate}/s`, run: paced(CFG.lowRate, CFG.lowS), drainMs: 300 },
  {
    key: "A'",
    label: `A' autocannon overallRate ${CFG.rate}`,
    run: (t) =>
      runAutocannon({
        url: t.proc.url,
        make: t.make,
        connections: Math.max(10, Math.round(CFG.rate / 20)),
        durationS: CFG.acRateS,
        overallRate: CFG.rate,
      }),
    drainMs: 300,
  },
  { key: 'B', label: `B saturation ${CFG.connections} conn`, run: saturation(CFG.satS), drainMs: 300 },
];

/**
 * One measurement: refill the buckets, run the load, wait `drainMs` for the server to finish what
 * was still in flight when the load stopped, then close the CPU window — so the CPU covers every
 * request sent, and per-request CPU divides by requests sent.
 */
async function measure(
  db: BenchDatabase,
  t: Target,
  run: (t: Target) => Promise<LoadResult>,
  drainMs = 300,
): Promise<Measured> {
  await db.refillBuckets();
  const logBefore = t.proc.handle.logBytes();
  const close = await cpuWindow(t.proc.handle.pid, () => db.backendPids(t.proc.appName), CORES);
  const load = await run(t);
  await sleep(drainMs);
  const cpu = await close();
  return { load, cpu, logBytesPerReq: (t.proc.handle.logBytes() - logBefore) / Math.max(1, load.sent) };
}

const usPerReq = (ms: number, n: number) => (ms * 1000) / Math.max(1, n);
const serverUs = (m: Measured) => usPerReq(m.cpu.serverMs, m.load.sent);
const pgUs = (m: Measured) => usPerReq(m.cpu.postgresMs, m.load.sent);
const otherPct = (m: Measured) => (100 * m.cpu.otherMs) / m.cpu.wallMs;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const signed = (x: number) => `${x >= 0 ? '+' : '−'}${f0(Math.abs(x))}`;

const range = (xs: number[], f: (x: number) => string) =>
  xs.length > 1 ? `${f(Math.min(...xs))}–${f(Math.max(...xs))}` : '';
/** Rotate by `round` and reverse every other round, so no entry always follows the same one. */
function roundOrder<T>(xs: T[], round: number, step = 1): T[] {
  const rot = xs.map((_, i) => xs[(i + round * step) % xs.length]);
  return round % 2 ? rot.reverse() : rot;
}

// ---------------------------------------------------------------- the run

interface Sample {
  round: number;
  target: string;
  phase: string;
  m: Measured;
}

interface StepDef {
  name: string;
  what: string;
  group: 'cumulative' | 'what-if' | 'api';
  /** Which row its Δ is taken against. */
  vs?: string;
  spec: string;
}

interface Results {
  mach: ReturnType<typeof machine>;
  db: BenchDatabase;
  runtimeS: number;
  cmp: Sample[];
  steps: Sample[];
  stepDefs: StepDef[];
  pieces: { round: number; name: string; r: PieceResult }[];
  pieceDefs: Piece[];
  profiles: ProfileRow[];
  bodyBytes: Record<string, number>;
}

const API_INFO = 'api (LOG_LEVEL=info)';
const API_WARN = 'api (LOG_LEVEL=warn)';
/** BENCH_WARN=0 leaves out the LOG_LEVEL=warn api: one pool of 20 fewer on a shared Postgres. */
const WITH_WARN = process.env.BENCH_WARN !== '0';
const CMP = WITH_WARN ? ['floor', API_WARN, API_INFO] : ['floor', API_INFO];

interface ProfileRow {
  name: string;
  m: Measured;
  summary: ProfileSummary;
}

function stepDefs(): StepDef[] {
  const cum = ['knex', 'auth', 'ratelimit', 'tx', 'paging', 'log'];
  const what: Record<string, string> = {
    knex: 'same query via the knex builder and pool',
    auth: 'authenticate(): SHA-256 + api_keys lookup',
    ratelimit: 'takeToken(): bucket upsert (a write; the api does key + bucket in one prepared statement)',
    tx: 'withTenant(): BEGIN, set_config, query under RLS, COMMIT',
    paging:
      'entitlementPage() in readAsTenant() instead of withTenant(): rows + count subquery (written SQL, prepared, times as text) + serializer',
    log: 'requestContext() + errorHandler(): pino info line',
  };
  const defs: StepDef[] = [
    { name: 'floor', what: 'bare Koa + pg.Pool, one query, tenant from the URL', group: 'cumulative', spec: '' },
  ];
  cum.forEach((c, i) =>
    defs.push({
      name: i === 0 ? 'floor + knex' : `+ ${c}`,
      what: what[c],
      group: 'cumulative',
      vs: defs[i].name,
      spec: cum.slice(0, i + 1).join('+'),
    }),
  );
  const full = cum.join('+');
  defs.push({
    name: API_INFO,
    what: 'the real api process: adds router, zod, executeOperation, body rules',
    group: 'api',
    vs: '+ log',
    spec: '',
  });
  const ifs: [string, string, string][] = [
    ['what-if: auth cached', full.replace('auth', 'authcache'), 'authenticate() behind a 10 s in-process cache'],
    [
      'what-if: gate in 1 statement',
      full.replace('auth+ratelimit', 'gate1'),
      'key lookup + bucket upsert as one CTE: 1 round trip instead of 2',
    ],
  ];
  for (const [name, spec, w] of ifs) defs.push({ name, what: w, group: 'what-if', vs: '+ log', spec });
  return defs;
}

async function main() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'billing-bench-'));
  const t0 = Date.now();
  const db = await createBenchDatabase({ tenants: CFG.tenants, log });
  // Interrupted, the finally below never runs: the servers are killed (lib/proc.ts) and this drops the database.
  const forget = atInterrupt(() => db.drop());
  const mach = machine(db.pgVersion);
  log(
    `machine: ${mach.nproc} cpu (${mach.cpuModel}), ${mach.memoryGiB} GiB, node ${mach.node}, postgres ${mach.postgres}, load average ${mach.loadavg}`,
  );
  const cmp: Sample[] = [];
  const steps: Sample[] = [];
  const pieces: { round: number; name: string; r: PieceResult }[] = [];
  const pieceDefs: Piece[] = [];
  const profiles: ProfileRow[] = [];
  const bodyBytes: Record<string, number> = {};
  const defs = stepDefs();
  const procs: Proc[] = [];
  const stop = async (p: Proc) => {
    procs.splice(procs.indexOf(p), 1);
    await stopProc(p);
  };
  const warm = async (t: Target, sec: number, connections = 16) => {
    bodyBytes[t.name] = await sanityCheck(t);
    await db.refillBuckets();
    await runAutocannon({ url: t.proc.url, make: t.make, connections, durationS: sec });
  };
  const show = (x: Sample) =>
    log(
      `r${x.round + 1} ${x.phase.padEnd(4)} ${x.target.slice(0, 28).padEnd(28)} ${f0(x.m.load.rps).padStart(5)}/s p50 ${f1(x.m.load.p50).padStart(7)} p99 ${f1(x.m.load.p99).padStart(8)} ms` +
        `${x.m.load.non2xx ? ` NON-2XX ${x.m.load.non2xx}` : ''}${x.m.load.unfinished ? ` unanswered ${x.m.load.unfinished}` : ''}` +
        `  µs/req server ${f0(serverUs(x.m))} pg ${f0(pgUs(x.m))}  other ${f0(otherPct(x.m))}%`,
    );
  try {
    // Connections: max_connections is often 100 and shared, so at most three pools of 20 are open
    // at any time: part 1 floor + 2 api; part 2a floor (raw + knex) + api; part 2b this process's
    // three; part 3 one profiled server at a time.
    // Every server that did start is stopped by the finally below, even when another failed to.
    const started = await Promise.allSettled([
      startProc('floor', 'floor', db, tmp, { logLevel: 'info' }),
      startProc('api info', 'api', db, tmp, { logLevel: 'info' }),
      ...(WITH_WARN ? [startProc('api warn', 'api', db, tmp, { logLevel: 'warn' })] : []),
    ]);
    for (const s of started) if (s.status === 'fulfilled') procs.push(s.value);
    const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
    const [floorP, infoP, warnP] = procs;
    const cmpT = [
      target('floor', floorP, db, 'floor'),
      ...(warnP ? [target(API_WARN, warnP, db, 'api')] : []),
      target(API_INFO, infoP, db, 'api'),
    ];
    for (const t of cmpT) await warm(t, 2, 32);
    log('servers up and warm');
    // The paced phase offers half of what the floor answers at saturation right now (two short
    // measurements, the better one): the aim is p99 < 50 ms there, so the rate follows the machine.
    const sats: number[] = [];
    for (let i = 0; i < 2; i++) sats.push((await measure(db, cmpT[0], saturation(CFG.satS))).load.rps);
    CFG.floorSat = Math.max(...sats);
    if (!CFG.rate) CFG.rate = Math.max(50, Math.round(CFG.floorSat / 2 / 10) * 10);
    PHASES = phases();
    log(`floor saturation ${f0(CFG.floorSat)}/s: paced phase A at ${CFG.rate}/s`);

    // ---- 1. ours vs floor, interleaved ----
    for (let round = 0; round < CFG.rounds; round++) {
      for (const ph of PHASES) {
        for (const t of roundOrder(cmpT, round)) {
          const x = { round, target: t.name, phase: ph.key, m: await measure(db, t, ph.run, ph.drainMs) };
          cmp.push(x);
          show(x);
        }
      }
    }
    if (warnP) await stop(warnP);

    // ---- 2a. the breakdown, interleaved ----
    const stepT = defs.map((d) =>
      d.name === API_INFO ? target(d.name, infoP, db, 'api') : target(d.name, floorP, db, 'floor', d.spec),
    );
    for (const t of stepT) await warm(t, t.name === API_INFO || t.name === 'floor' ? 0.5 : 1, 32);
    log('breakdown');
    for (let round = 0; round < CFG.stepRounds; round++) {
      for (const t of roundOrder(stepT, round, 3)) {
        const x = { round, target: t.name, phase: 'B', m: await measure(db, t, saturation(CFG.stepS)) };
        steps.push(x);
        if (x.m.load.non2xx || process.env.BENCH_VERBOSE) show(x);
      }
      log(`round ${round + 1}/${CFG.stepRounds} done`);
    }
    await stop(floorP);
    await stop(infoP);

    // ---- 2b. the pieces one at a time, in-process ----
    log('pieces');
    // The shared Postgres may refuse more connections (other people's work): then the report
    // goes without the pieces instead of losing the rounds above.
    const kit = await pieceKit(db, 'bench_pieces').catch((e) => {
      log(`pieces skipped: ${e?.message ?? e}`);
      return undefined;
    });
    if (kit)
      try {
        for (const p of kit.pieces) await kit.measure(p, 0.3); // warm
        for (let round = 0; round < CFG.pieceRounds; round++) {
          for (const p of roundOrder(kit.pieces, round, 4)) {
            await db.refillBuckets();
            pieces.push({
              round,
              name: p.name,
              r: await kit.measure(p, p.concurrency > 1 ? CFG.pieceS : CFG.pieceS / 2),
            });
          }
        }
        pieceDefs.push(...kit.pieces);
      } catch (e) {
        log(`pieces stopped: ${(e as Error)?.message ?? e}`);
        pieces.length = 0;
      } finally {
        await kit.close();
      }

    // ---- 3. CPU profiles: where the server's own time goes ----
    if (CFG.profile) {
      for (const [name, kind] of [
        ['floor', 'floor'],
        [API_INFO, 'api'],
      ] as const) {
        const dir = path.join(tmp, `prof-${kind}`);
        const p = await startProc(`${kind} profiled`, kind, db, tmp, {
          logLevel: 'info',
          nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`],
        });
        procs.push(p);
        const t = target(name, p, db, kind);
        await warm(t, 3, 32);
        const from = Number(process.hrtime.bigint() / 1000n);
        const m = await measure(db, t, saturation(CFG.profileS));
        const to = Number(process.hrtime.bigint() / 1000n);
        await stop(p);
        const file = fs.readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
        if (!file) throw new Error(`no CPU profile written for ${name}`);
        profiles.push({ name, m, summary: summariseProfile(path.join(dir, file), ROOT, from, to) });
        log(`profiled ${name}: ${f0(m.load.rps)}/s`);
      }
    }
  } finally {
    for (const p of [...procs]) await stopProc(p).catch(() => {});
    forget();
    await db.drop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  const md = report({
    mach,
    db,
    runtimeS: (Date.now() - t0) / 1000,
    cmp,
    steps,
    stepDefs: defs,
    pieces,
    pieceDefs,
    profiles,
    bodyBytes,
  });
  process.stdout.write(`\n${md}\n`);
  if (CFG.write) {
    writeSection(path.join(ROOT, 'bench', 'RESULTS.md'), md);
    log('bench/RESULTS.md updated');
  }
}

// ---------------------------------------------------------------- the report

function report(r: Results): string {
  const { mach, db } = r;
  const of = (xs: Sample[], target: string, phase: string) =>
    xs.filter((x) => x.target === target && x.phase === phase);
  const pooled = (xs: Sample[]) => pool(xs.map((x) => x.m.load));
  const med = (xs: Sample[], f: (m: Measured) => number) => median(xs.map((x) => f(x.m)));
  /** Per-round f(a) − f(b) (or ratio), median over rounds: neighbours in time share the background. */
  const paired = (
    xs: Sample[],
    a: string,
    b: string,
    phase: string,
    f: (m: Measured) => number,
    op: (x: number, y: number) => number,
  ) => {
    const vals: number[] = [];
    const rounds = Math.max(...xs.map((x) => x.round)) + 1;
    for (let round = 0; round < rounds; round++) {
      const x = xs.find((s) => s.round === round && s.target === a && s.phase === phase);
      const y = xs.find((s) => s.round === round && s.target === b && s.phase === phase);
      if (x && y) vals.push(op(f(x.m), f(y.m)));
    }
    return vals;
  };
  const rps = (m: Measured) => m.load.rps;
  const cpuTotal = (m: Measured) => serverUs(m) + pgUs(m);
  const ratioOp = (x: number, y: number) => x / y;
  const diffOp = (x: number, y: number) => x - y;

  // ---- ours vs floor ----
  const headline = CMP.map((t) => {
    const b = pooled(of(r.cmp, t, 'B'));
    const a = pooled(of(r.cmp, t, 'A'));
    const l = pooled(of(r.cmp, t, 'L'));
    const ratios = paired(r.cmp, t, 'floor', 'B', rps, ratioOp);
    const ratio = median(ratios);
    return [
      t,
      `${f0(b.rps)} (${range(
        of(r.cmp, t, 'B').map((x) => x.m.load.rps),
        f0,
      )})`,
      t === 'floor' ? '1' : `**${f2(ratio)}** (${range(ratios, f2)})`,
      `${f0(a.rps)}${a.unfinished ? `, ${a.unfinished} unanswered` : ''}`,
      `${f1(a.p50)} / **${f1(a.p99)}**`,
      `${f1(l.p50)} / ${f1(l.p99)}`,
      f0(med(of(r.cmp, t, 'B'), cpuTotal)),
      t === 'floor' ? '' : `${ratio >= 0.7 ? 'yes' : 'no'} / ${a.p99 < 50 ? 'yes' : 'no'}`,
    ];
  });
  const headTable = table(
    [
      'server',
      'saturation req/s (per-round range)',
      'ratio to floor, median of rounds (range)',
      `answered/s at ${CFG.rate}/s offered`,
      `p50 / p99 ms at ${CFG.rate}/s`,
      `p50 / p99 ms at ${CFG.lowRate}/s`,
      'CPU µs/req saturated (server + PG)',
      `ratio ≥ 0.7 / p99 < 50 ms at ${CFG.rate}/s`,
    ],
    headline,
    ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'l'],
  );

  const perRound = table(
    [
      'round',
      ...CMP.map((t) => `${t} req/s`),
      ...CMP.slice(1).map((t) => `${t.includes('warn') ? 'warn' : 'info'} / floor`),
      'other load',
    ],
    Array.from({ length: CFG.rounds }, (_, round) => {
      const get = (t: string) => r.cmp.find((x) => x.round === round && x.target === t && x.phase === 'B')!.m;
      const fl = get('floor');
      return [
        round + 1,
        ...CMP.map((t) => f0(get(t).load.rps)),
        ...CMP.slice(1).map((t) => f2(get(t).load.rps / fl.load.rps)),
        CMP.map((t) => `${f0(otherPct(get(t)))}%`).join(' / '),
      ];
    }),
  );

  const phaseLabel = Object.fromEntries(PHASES.map((p) => [p.key, p.label]));
  const allRows: (string | number)[][] = [];
  for (const ph of PHASES) {
    for (const t of CMP) {
      const xs = of(r.cmp, t, ph.key);
      const p = pooled(xs);
      const svc = xs.map((x) => x.m.load as LoadResult & { serviceP50?: number; serviceP99?: number });
      const cpuOk = ph.key === 'L' || ph.key === 'B';
      allRows.push([
        phaseLabel[ph.key],
        t,
        f0(p.rps),
        f2(p.p50),
        f2(p.p90),
        f1(p.p99),
        f1(p.max),
        p.non2xx + p.errors,
        // Per-request CPU only where every request sent was answered and counted (L, B).
        cpuOk ? f0(med(xs, serverUs)) : '–',
        cpuOk ? f0(med(xs, pgUs)) : '–',
        cpuOk ? f0(med(xs, (m) => usPerReq(m.cpu.loadgenMs, m.load.sent))) : '–',
        `${f0(med(xs, otherPct))}%`,
        [
          p.unfinished ? `${p.unfinished} unanswered at cut-off` : '',
          svc[0].serviceP99 !== undefined
            ? `from actual send: p50 ${f1(median(svc.map((s) => s.serviceP50!)))} / p99 ${f1(median(svc.map((s) => s.serviceP99!)))} ms`
            : '',
          med(xs, (m) => m.logBytesPerReq) > 1 ? `log ${f0(med(xs, (m) => m.logBytesPerReq))} B/req` : '',
        ]
          .filter(Boolean)
          .join('; '),
      ]);
    }
  }
  const allTable = table(
    [
      'phase',
      'server',
      'req/s',
      'p50 ms',
      'p90 ms',
      'p99 ms',
      'max ms',
      'non-2xx',
      'server CPU µs/req',
      'PG CPU µs/req',
      'loadgen CPU µs/req',
      'other load',
      'notes',
    ],
    allRows,
    ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'l'],
  );

  // ---- breakdown ----
  const stepRows = r.stepDefs.map((d) => {
    const xs = of(r.steps, d.name, 'B');
    const p = pooled(xs);
    const dS = d.vs ? paired(r.steps, d.name, d.vs, 'B', serverUs, diffOp) : [];
    const dP = d.vs ? paired(r.steps, d.name, d.vs, 'B', pgUs, diffOp) : [];
    const dT = d.vs ? paired(r.steps, d.name, d.vs, 'B', cpuTotal, diffOp) : [];
    const rr = d.vs ? paired(r.steps, d.name, d.vs, 'B', rps, ratioOp) : [];
    return [
      d.name,
      d.what,
      f0(p.rps),
      d.vs ? `${f2(median(rr))} vs ${d.vs}` : '',
      f1(p.p50),
      f1(p.p99),
      f0(med(xs, serverUs)),
      f0(med(xs, pgUs)),
      d.vs ? signed(median(dS)) : '',
      d.vs ? signed(median(dP)) : '',
      d.vs ? `**${signed(median(dT))}** (${range(dT, signed)})` : '',
      r.bodyBytes[d.name],
      `${f0(med(xs, otherPct))}%`,
    ];
  });
  const stepTable = table(
    [
      'step',
      'what it adds',
      'req/s',
      'req/s ratio',
      'p50 ms',
      'p99 ms',
      'server µs/req',
      'PG µs/req',
      'Δ server',
      'Δ PG',
      'Δ CPU total (range)',
      'body B',
      'other load',
    ],
    stepRows,
    ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
  );
  const fl = of(r.steps, 'floor', 'B');
  const api = of(r.steps, 'api (LOG_LEVEL=info)', 'B');
  const cpuRatio = median(paired(r.steps, 'api (LOG_LEVEL=info)', 'floor', 'B', cpuTotal, ratioOp));

  // ---- pieces ----
  const pieceStat = (name: string, f: (x: PieceResult) => number) =>
    median(r.pieces.filter((x) => x.name === name).map((x) => f(x.r)));
  const pTot = (name: string) => pieceStat(name, (x) => x.nodeUs + x.pgUs);
  const pieceRows = r.pieceDefs.map((p) => [
    p.name,
    p.trips,
    p.what,
    f0(pieceStat(p.name, (x) => x.nodeUs)),
    f0(pieceStat(p.name, (x) => x.pgUs)),
    `**${f0(pTot(p.name))}**`,
    f2(pieceStat(p.name, (x) => x.meanMs)),
  ]);
  const apiParts = [
    'gate statement (api)',
    'readAsTenant() + entitlementPage()',
    'requestContext(): request id + pino info line',
    'executeOperation() without DB work',
  ];
  const apiSum = apiParts.reduce((k, n) => k + pTot(n), 0);
  const floorQ = pTot('query, raw pg (the floor)');
  const piecesMd = r.pieceDefs.length
    ? `### The pieces one at a time (in-process, no HTTP; ${CFG.pieceRounds} interleaved rounds, medians)

DB pieces: 16 concurrent callers on a pool of 20 for ${CFG.pieceS} s; CPU-only pieces: one caller. Cost per call = this process's CPU + its Postgres backends' CPU; mean time per call by Little's law (includes waiting for a pool connection).

${table(['piece', 'round trips', 'what', 'node µs/call', 'PG µs/call', 'total µs/call', 'mean ms/call'], pieceRows, ['l', 'r', 'l', 'r', 'r', 'r', 'r'])}

Sum of the api's pieces (${apiParts.join(' + ')}) = **${f0(apiSum)} µs** per request beyond HTTP/Koa, against **${f0(floorQ)} µs** for the floor's one query: +${f0(apiSum - floorQ)} µs per request before HTTP, routing and the response, which both pay.
`
    : '';

  // ---- profiles ----
  let profileMd = '';
  if (r.profiles.length === 2) {
    const [pf, pa] = r.profiles;
    const per = (p: ProfileRow, c: string) =>
      (1000 * (p.summary.categories.find((x) => x.category === c)?.ms ?? 0)) / Math.max(1, p.m.load.sent);
    const cats = [...new Set([...pa.summary.categories, ...pf.summary.categories].map((c) => c.category))]
      .map((c) => ({ c, a: per(pa, c), f: per(pf, c) }))
      .sort((x, y) => y.a - x.a);
    const shown = cats.filter((x) => x.a >= 10 || x.f >= 10);
    const rest = cats.filter((x) => x.a < 10 && x.f < 10);
    const top = (p: ProfileRow, c: string) => p.summary.categories.find((x) => x.category === c)?.top ?? '';
    const rows = shown.map((x) => [x.c, f0(x.f), f0(x.a), signed(x.a - x.f), top(pa, x.c), top(pf, x.c)]);
    rows.push([
      `${rest.length} smaller categories`,
      f0(rest.reduce((k, x) => k + x.f, 0)),
      f0(rest.reduce((k, x) => k + x.a, 0)),
      signed(rest.reduce((k, x) => k + x.a - x.f, 0)),
      '',
      '',
    ]);
    rows.push([
      '**main thread busy, sampled**',
      f0((1000 * pf.summary.busyMs) / pf.m.load.sent),
      f0((1000 * pa.summary.busyMs) / pa.m.load.sent),
      signed((1000 * pa.summary.busyMs) / pa.m.load.sent - (1000 * pf.summary.busyMs) / pf.m.load.sent),
      '',
      '',
    ]);
    rows.push([
      'process CPU from /proc (all threads, incl. kernel)',
      f0(serverUs(pf.m)),
      f0(serverUs(pa.m)),
      signed(serverUs(pa.m) - serverUs(pf.m)),
      '',
      '',
    ]);
    profileMd = `### Where the server process's own time goes (V8 CPU profile, saturation, ${CFG.profileS} s after a 3 s warm-up)

Self time per request by where the code lives (node --cpu-prof on a separate run of each server: floor ${f0(pf.m.load.rps)} req/s, api ${f0(pa.m.load.rps)} req/s while profiled; the profiler itself costs a little).

${table(['category', 'floor µs/req', 'api µs/req', 'Δ', 'api: top functions (share of the category)', 'floor: top functions'], rows, ['l', 'r', 'r', 'r', 'l', 'l'])}
`;
  }

  const non2xx = [...r.cmp, ...r.steps].reduce((n, x) => n + x.m.load.non2xx + x.m.load.errors, 0);

  return `Run: ${mach.date} · \`${COMMAND}\` (DATABASE_URL ${process.env.DATABASE_URL ? 'set' : 'unset: embedded Postgres'}) · ${r.runtimeS.toFixed(0)} s
Machine: ${mach.nproc} CPUs (${mach.cpuModel}), ${mach.memoryGiB} GiB RAM, node ${mach.node}, PostgreSQL ${mach.postgres}${db.embedded ? ' (embedded)' : ''} on the same host; load average at start ${mach.loadavg}. Load generator, servers, Postgres and other people's work share the CPUs.
Data: ${db.tenants.length} tenants, ${db.entitlements} entitlements (50–100 each), one key per tenant; requests rotate over all keys; buckets refilled before every measurement. Pool max 20 in every server. Response: 50 rows, ${f1(r.bodyBytes[API_INFO] / 1024)} KiB. Non-2xx responses over the whole run: ${non2xx}.

### Ours vs floor (${CFG.rounds} interleaved rounds)

${headTable}

Saturation per round (each round measures the three back to back, so the ratio is between neighbours in time):

${perRound}

All phases, pooled over the rounds (CPU columns: median of rounds):

${allTable}

- **A / L paced**: A offers ${CFG.rate}/s, ${process.env.BENCH_RATE ? 'set by BENCH_RATE' : `half the floor's saturation measured just before the rounds (${f0(CFG.floorSat)}/s)`}. Open loop — a request is due every ${f2(1000 / CFG.rate)} ms (L: ${f2(1000 / CFG.lowRate)} ms) whatever the server does; latency counts from when it was due (no coordinated omission); requests still unanswered 1 s after the last one was due are cut off and enter the percentiles with the time they had waited. ${CFG.pacedS} s (L: ${CFG.lowS} s) per round.
- **A' autocannon overallRate**: autocannon does not pace — each connection sends its per-second quota back to back as each one-second window opens, then idles — so this is a burst at the top of every second, timed from the actual send (its CO correction is off: with overallRate it assumes a 1 ms interval and fabricates samples). Shown because it is the usual way; A is the honest fixed-rate number. ${CFG.acRateS} s per round.
- **B saturation**: closed loop, ${CFG.connections} keep-alive connections, no cap, ${CFG.satS} s per round.
- CPU per request from /proc: the server process, and its own Postgres backends (by application_name); shown for L and B only (in A and A' requests are abandoned or miscounted, so the divisor is unknown). "other load": CPU used meanwhile by everything else on the machine, % of one core (of ${mach.nproc}).

### Where the api's extra cost goes (saturation, ${CFG.stepRounds} interleaved rounds of ${CFG.stepS} s)

Cumulative rows add one production piece to the row above, each by calling the real function (bench/floor-server.ts). The api row is the real process; what-if rows swap pieces of "+ log" (= every production piece) for a candidate change. Δ columns: per-round difference to the row named in "req/s ratio", median over rounds (range in brackets). CPU per request is steadier than req/s, but each Δ is still the difference of two noisy totals of ~2,000–4,000 µs: read the ranges, and the in-process pieces below for the per-piece attribution.

${stepTable}

Floor ${f0(med(fl, cpuTotal))} µs CPU/req → api ${f0(med(api, cpuTotal))} µs CPU/req (server + Postgres; ×${f2(cpuRatio)} paired per round); saturated ${f0(pooled(fl).rps)} → ${f0(pooled(api).rps)} req/s.

${piecesMd}
${profileMd}`;
}

main().catch((e) => {
  log(`failed: ${e?.stack ?? e}`);
  process.exit(1);
});
