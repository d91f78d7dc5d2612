import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { ROOT_DIR } from '../runtime/config';
import { freePort, isPortOpen } from '../runtime/ports';
import { startDevServer } from '../temporal/dev-server';
import { createBenchDatabase } from './lib/db';
import { atInterrupt, track } from './lib/proc';
import { machine, table, f0, f2 } from './lib/report';
import { runBench } from './lib/run';
import { writeGeneratedBlock } from './lib/section';

/**
 * `npm run bench:start`: start time and memory of the api and worker processes, from the sources
 * through tsx (what the image ran before issue #22) and compiled (`node dist/...`, what it runs
 * now), side by side in one run, alternating, ROUNDS times each, on a throwaway database and a
 * local Temporal dev server. Start time: spawn → /readyz 200 (api) or → its metrics listener
 * open, which happens once Worker.create is done (worker). Memory: RSS at that moment.
 */
const ROUNDS = Number(process.env.ROUNDS ?? 5);

type Variant = { name: string; kind: 'api' | 'worker'; args: string[] };
const VARIANTS: Variant[] = [
  { name: 'api, tsx', kind: 'api', args: ['--import', 'tsx', 'api/main.ts'] },
  { name: 'api, node dist/', kind: 'api', args: ['--enable-source-maps', 'dist/api/main.js'] },
  { name: 'worker, tsx', kind: 'worker', args: ['--import', 'tsx', 'temporal/worker-main.ts'] },
  { name: 'worker, node dist/', kind: 'worker', args: ['--enable-source-maps', 'dist/temporal/worker-main.js'] },
];

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function once(v: Variant, env: NodeJS.ProcessEnv): Promise<{ ms: number; rss: number }> {
  const [api, dashboard, tools, metrics] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  const started = performance.now();
  const child = spawn(process.execPath, v.args, {
    cwd: ROOT_DIR,
    env: {
      ...process.env,
      ...env,
      API_PORT: String(api),
      DASHBOARD_PORT: String(dashboard),
      TOOLS_PORT: String(tools),
      METRICS_PORT: String(metrics),
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  track(child);
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${v.name} exited ${child.exitCode}: ${stderr}`);
      const ready =
        v.kind === 'api'
          ? await fetch(`http://127.0.0.1:${api}/readyz`).then(
              (r) => r.status === 200,
              () => false,
            )
          : await isPortOpen('127.0.0.1', metrics);
      if (ready) break;
      if (performance.now() - started > 300_000) throw new Error(`${v.name} not ready in 300 s: ${stderr}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    return { ms: performance.now() - started, rss: rssMiB(child.pid!) };
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)));
  }
}

runBench(async () => {
  const log = (m: string) => console.error(`[bench:start] ${m}`);
  const buildStarted = performance.now();
  const build = spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT_DIR, 'scripts/build.ts')], {
    cwd: ROOT_DIR,
    encoding: 'utf8',
  });
  if (build.status !== 0) throw new Error(`build failed: ${build.stderr}`);
  const buildS = (performance.now() - buildStarted) / 1000;
  log(`built in ${buildS.toFixed(1)} s`);
  const db = await createBenchDatabase({ tenants: 1, log });
  const temporal = await startDevServer({ port: await freePort(), uiPort: null });
  track(temporal.process); // an interrupted bench leaves no dev server behind
  const cleanup = async () => {
    await temporal.stop();
    await db.drop();
  };
  const detach = atInterrupt(cleanup);
  const loadBefore = machine(db.pgVersion).loadavg;
  const env: NodeJS.ProcessEnv = {
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    DATABASE_URL: db.url,
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_TASK_QUEUE: `bench-start-${crypto.randomBytes(3).toString('hex')}`,
    MASTER_KEY: `k1:${crypto.randomBytes(32).toString('base64')}`,
    STORE_ANDROID_PUSH_SERVICE_ACCOUNT: 'bench@example.iam.gserviceaccount.com',
  };
  const results = new Map<string, { ms: number[]; rss: number[] }>(VARIANTS.map((v) => [v.name, { ms: [], rss: [] }]));
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const v of VARIANTS) {
        const r = await once(v, env);
        results.get(v.name)!.ms.push(r.ms);
        results.get(v.name)!.rss.push(r.rss);
        log(`round ${round + 1} ${v.name}: ${f0(r.ms)} ms, ${f0(r.rss)} MiB`);
      }
    }
  } finally {
    detach();
    await cleanup();
  }
  const m = machine(db.pgVersion);
  const row = (name: string) => results.get(name)!;
  const ratio = (a: string, b: string, k: 'ms' | 'rss') => f2(median(row(b)[k]) / median(row(a)[k]));
  const body = [
    `Run: ${m.date} · ${m.nproc} cores (${m.cpuModel}), ${m.memoryGiB} GiB · Node ${m.node} · Postgres ${m.postgres} · load average before: ${loadBefore}, after: ${m.loadavg}. The machine is shared and noisy: read the times against the load average.`,
    '',
    `Each process started ${ROUNDS} times, the four variants alternating, NODE_ENV=production, on a throwaway database and a local Temporal dev server. Start: spawn → \`/readyz\` 200 (api), spawn → metrics listener open, i.e. Worker.create done (worker). RSS at that moment. \`npm run build\` took ${buildS.toFixed(0)} s.`,
    '',
    table(
      ['process', 'start, median ms', 'start, all runs', 'RSS, median MiB', 'RSS, all runs'],
      VARIANTS.map((v) => [
        v.name,
        f0(median(row(v.name).ms)),
        row(v.name).ms.map(f0).join(', '),
        f0(median(row(v.name).rss)),
        row(v.name).rss.map(f0).join(', '),
      ]),
      ['l', 'r', 'l', 'r', 'l'],
    ),
    '',
    `**Compiled / tsx: api start ×${ratio('api, tsx', 'api, node dist/', 'ms')}, RSS ×${ratio('api, tsx', 'api, node dist/', 'rss')}; worker start ×${ratio('worker, tsx', 'worker, node dist/', 'ms')}, RSS ×${ratio('worker, tsx', 'worker, node dist/', 'rss')}.**`,
  ].join('\n');
  writeGeneratedBlock(
    path.join(ROOT_DIR, 'bench/RESULTS.md'),
    'bench/process-start.ts',
    '## Process start and memory: tsx vs compiled (`npm run bench:start`)',
    body,
  );
  console.log(body);
});
