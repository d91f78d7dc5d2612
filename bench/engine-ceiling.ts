/**
 * The engine's ceiling: how many workflows per second the local Temporal dev server starts and
 * completes on this machine, file-backed with the CLI's default SQLite settings vs with
 * WAL + synchronous=normal (what `npm start` now passes). Rounds alternate the two servers so
 * the shared machine's load falls on both alike. Writes its section of bench/RESULTS.md.
 *
 *   npx tsx bench/engine-ceiling.ts [--rounds 3] [--count 200]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { startDevServer, DEFAULT_SQLITE_PRAGMAS } from '../temporal/dev-server';
import { freePort } from '../runtime/ports';
import { emptyWorkflow, oneActivityWorkflow } from './engine/workflows';
import * as activities from './engine/activities';
import { runBench } from './lib/run';
import { track } from './lib/proc';
import { numArg } from './lib/args';

const ROUNDS = numArg('rounds', 3);
const COUNT = numArg('count', 200);
const CONCURRENCY = 32;
const HERE = path.dirname(fileURLToPath(import.meta.url));

type Kind = 'empty' | 'one-activity';
interface Sample {
  setting: string;
  kind: Kind;
  perSec: number;
  p50: number;
  p99: number;
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

async function runKind(client: Client, taskQueue: string, kind: Kind, count: number): Promise<Omit<Sample, 'setting'>> {
  const latencies: number[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) {
        const i = next++;
        const s = performance.now();
        const id = `bench-${kind}-${process.pid}-${Date.now()}-${i}`;
        if (kind === 'empty') await client.workflow.execute(emptyWorkflow, { taskQueue, workflowId: id });
        else await client.workflow.execute(oneActivityWorkflow, { taskQueue, workflowId: id });
        latencies.push(performance.now() - s);
      }
    }),
  );
  const secs = (performance.now() - t0) / 1000;
  return { kind, perSec: count / secs, p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99) };
}

/** One workflow run alone, many times: latency without queueing. */
async function alone(client: Client, taskQueue: string, n: number): Promise<number> {
  const xs: number[] = [];
  for (let i = 0; i < n; i++) {
    const s = performance.now();
    await client.workflow.execute(oneActivityWorkflow, {
      taskQueue,
      workflowId: `bench-alone-${process.pid}-${Date.now()}-${i}`,
    });
    xs.push(performance.now() - s);
  }
  return quantile(xs, 0.5);
}

async function withServer<T>(pragmas: string[], fn: (client: Client, taskQueue: string) => Promise<T>): Promise<T> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-ceiling-'));
  const port = await freePort();
  const server = await startDevServer({
    port,
    uiPort: null,
    dbFile: path.join(dir, 'temporal.db'),
    sqlitePragmas: pragmas,
  });
  track(server.process); // an interrupted bench leaves no dev server behind
  const connection = await Connection.connect({ address: server.address });
  const native = await NativeConnection.connect({ address: server.address });
  const taskQueue = `engine-${port}`;
  const worker = await Worker.create({
    connection: native,
    taskQueue,
    workflowsPath: path.join(HERE, 'engine/workflows.ts'),
    activities,
    maxConcurrentWorkflowTaskExecutions: 64,
  });
  const running = worker.run();
  try {
    const client = new Client({ connection });
    await runKind(client, taskQueue, 'empty', 20); // warm: bundle loaded, caches filled
    return await fn(client, taskQueue);
  } finally {
    worker.shutdown();
    await running;
    await connection.close();
    await native.close();
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function main() {
  const started = new Date();
  const load = os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  const settings: Array<[string, string[]]> = [
    ['CLI default (file)', []],
    [`${DEFAULT_SQLITE_PRAGMAS.join(', ')} (file)`, DEFAULT_SQLITE_PRAGMAS],
  ];
  const samples: Sample[] = [];
  const aloneP50: Record<string, number[]> = {};
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? settings : [...settings].reverse();
    for (const [name, pragmas] of order) {
      await withServer(pragmas, async (client, tq) => {
        for (const kind of ['empty', 'one-activity'] as Kind[]) {
          const s = { setting: name, ...(await runKind(client, tq, kind, COUNT)) };
          samples.push(s);
          console.log(
            `round ${r + 1} ${name} ${kind}: ${s.perSec.toFixed(1)}/s p50 ${s.p50.toFixed(0)} ms p99 ${s.p99.toFixed(0)} ms`,
          );
        }
        (aloneP50[name] ??= []).push(await alone(client, tq, 20));
      });
    }
  }
  const median = (xs: number[]) => quantile(xs, 0.5);
  const rows = settings.flatMap(([name]) =>
    (['empty', 'one-activity'] as Kind[]).map((kind) => {
      const xs = samples.filter((s) => s.setting === name && s.kind === kind);
      return `| ${name} | ${kind} | ${median(xs.map((s) => s.perSec)).toFixed(1)} | ${median(xs.map((s) => s.p50)).toFixed(0)} | ${median(xs.map((s) => s.p99)).toFixed(0)} | ${xs.map((s) => s.perSec.toFixed(0)).join(', ')} |`;
    }),
  );
  const ratio = (kind: Kind) => {
    const per = (name: string) => samples.filter((s) => s.setting === name && s.kind === kind).map((s) => s.perSec);
    const a = per(settings[0][0]);
    const b = per(settings[1][0]);
    return median(b.map((x, i) => x / a[i])).toFixed(2);
  };
  const section = [
    `Run: ${started.toUTCString()} · ${os.cpus().length} cores (${os.cpus()[0]?.model}) · Node ${process.version} · load average before: ${load}`,
    '',
    `Each round starts a fresh file-backed \`temporal server start-dev\` per setting (order alternating), one worker in this process (max 64 concurrent workflow tasks), then executes ${COUNT} workflows with ${CONCURRENCY} in flight, per kind. ${ROUNDS} rounds; medians shown (with an even number of rounds, the upper middle one). The machine is shared: read the absolute rates against the load average above, and the ratio, paired per round, as the steadier figure.`,
    '',
    '| setting | workflow | completed/s | p50 ms | p99 ms | rounds (/s) |',
    '|:---|:---|---:|---:|---:|:---|',
    ...rows,
    '',
    `**WAL/normal vs default: ${ratio('empty')}× (empty), ${ratio('one-activity')}× (one activity)** (median of per-round ratios).`,
    `One one-activity workflow run alone (20 in sequence), p50: ${settings.map(([n]) => `${n} ${median(aloneP50[n]).toFixed(0)} ms`).join('; ')}.`,
    '',
    'Every later figure (payment to premium, ingest) is read against this ceiling: a design that spends one workflow start per event cannot go above the one-activity rate here. The receiver therefore signals a running per-customer entity workflow (signal-with-start) rather than starting one workflow per event. `npm start` passes `--sqlite-pragma journal_mode=wal --sqlite-pragma synchronous=normal` (temporal/dev-server.ts): WAL keeps the database consistent if the process dies; `synchronous=normal` may lose the last commits only on a power cut of the machine, acceptable for a local dev server. With more traffic, run a Temporal cluster on Postgres and point `TEMPORAL_ADDRESS` at it, with more workers.',
  ].join('\n');
  const file = path.join(HERE, 'RESULTS.md');
  const begin = '<!-- bench/engine-ceiling.ts: generated from here -->';
  const end = '<!-- bench/engine-ceiling.ts: generated up to here -->';
  let text = fs.readFileSync(file, 'utf8');
  const block = `${begin}\n${section}\n${end}`;
  if (text.includes(begin))
    text = text.slice(0, text.indexOf(begin)) + block + text.slice(text.indexOf(end) + end.length);
  else text += `\n## Temporal engine ceiling (local dev server)\n\n${block}\n`;
  fs.writeFileSync(file, text);
  console.log(section);
}

runBench(main);
