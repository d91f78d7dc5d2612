/**
 * The worst stall of the api's event loop while hostile imports arrive (issue 42, item 1): three
 * tenants with proven App Store connections each POST the largest file the bounds accept, 10,000
 * lines of 98 commas (about 1 MB), through the real REST API, while a probe asks GET /healthz of
 * the same process one request after another. The API and the worker share this process (the
 * sync benches' stack), so the stall measured covers the worker's reading of the files too: an
 * upper bound for an api process of its own. Measured with `monitorEventLoopDelay` (1 ms
 * resolution) in two phases: while the three POSTs are received and answered, and while the
 * worker reads the files into their lines. Beside it, in the same session, what the request
 * path before issue 42 did on the api's thread for one such file: csv-parse run once per line.
 *
 *   DATABASE_URL=postgres://… npx tsx bench/import-stall.ts [--imports 3]
 */
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse/sync';
import { markConnectionProven } from '../db/connection-service';
import { withTenant } from '../db/tenant-tx';
import { numArg } from './lib/args';
import { f0, f1, machine, table } from './lib/report';
import { runBench } from './lib/run';
import { writeGeneratedBlock } from './lib/section';
import { api, startSyncStack } from './lib/sync-stack';

const IMPORTS = numArg('imports', 3);
const HERE = path.dirname(fileURLToPath(import.meta.url));
const log = (m: string) => console.log(`[import-stall] ${m}`);
const ms = (ns: number) => ns / 1e6;
const hostile = ['original_transaction_id,app_user_id', ...Array.from({ length: 10_000 }, () => ','.repeat(98))].join(
  '\n',
);

/** GET /healthz one after another until stopped: how many, and the slowest answer. */
function probe(root: string) {
  let stop = false;
  let count = 0;
  let slowest = 0;
  const done = (async () => {
    while (!stop) {
      const t = performance.now();
      // A fresh connection each time: a kept-alive one the server closes as it is reused is a reset, not a stall.
      try {
        await (await fetch(`${root}/healthz`, { headers: { connection: 'close' } })).text();
      } catch {
        continue;
      }
      slowest = Math.max(slowest, performance.now() - t);
      count++;
    }
  })();
  return {
    async end() {
      stop = true;
      await done;
      return { count, slowest };
    },
  };
}

async function main() {
  const stack = await startSyncStack(log);
  const loadBefore = os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
  try {
    const tenants = [];
    for (let i = 0; i < IMPORTS; i++) {
      const t = await stack.tenant({
        name: `bench-stall-${i}`,
        providers: ['store_ios'],
        modes: ['test'],
        products: 1,
      });
      await withTenant(stack.db, t.tenantId, async (trx) => {
        for (const c of await trx('provider_connections').select('id'))
          await markConnectionProven(trx, c.id, 'control_api');
      });
      tenants.push(t);
    }
    const root = stack.apiUrl.replace(/\/v1$/, '');
    const h = monitorEventLoopDelay({ resolution: 1 });
    h.enable();
    const idle = probe(root);
    await new Promise((r) => setTimeout(r, 2000));
    const idleProbe = await idle.end();
    const idleMax = ms(h.max);
    h.reset();

    const receiving = probe(root);
    const t0 = performance.now();
    const answers = await Promise.all(
      tenants.map(async (t) => {
        const r = await api(stack.apiUrl, '/imports', t.key, {
          method: 'POST',
          body: JSON.stringify({ provider: 'store_ios', csv: hostile }),
        });
        if (r.status !== 202) throw new Error(`import answered ${r.status} ${JSON.stringify(r.body)}`);
        return { id: r.body.id as string, key: t.key, s: (performance.now() - t0) / 1000 };
      }),
    );
    const receivedProbe = await receiving.end();
    const received = { max: ms(h.max), p99: ms(h.percentile(99)), mean: ms(h.mean) };
    h.reset();

    const reading = probe(root);
    const t1 = performance.now();
    for (const a of answers)
      for (;;) {
        const r = await api(stack.apiUrl, `/imports/${a.id}`, a.key);
        if (r.body.refused_count === 10_000 || r.body.status !== 'running') break;
        await new Promise((r) => setTimeout(r, 200));
      }
    const readS = (performance.now() - t1) / 1000;
    const readProbe = await reading.end();
    const read = { max: ms(h.max), p99: ms(h.percentile(99)), mean: ms(h.mean) };
    h.disable();

    // The request path before: csv-parse once per line, on the api's thread, for one file.
    const b = performance.now();
    for (const line of hostile.split('\n')) parse(line, { relax_column_count: true });
    const beforeMs = performance.now() - b;

    const m = machine(stack.pgVersion);
    const body = [
      `Run: ${m.date} · ${m.nproc} cores (${m.cpuModel}), ${m.memoryGiB} GiB · Node ${m.node} · Postgres ${m.postgres} · load average before: ${loadBefore}, after: ${m.loadavg}. The machine is shared and noisy: read the times against the load average.`,
      '',
      `${IMPORTS} tenants each POST 10,000 lines of 98 commas (${(hostile.length / 1e6).toFixed(2)} MB, the largest file the bounds accept) at once; a probe asks GET /healthz one request after another. Event-loop delay of the process that runs the API and the worker (monitorEventLoopDelay, 1 ms resolution):`,
      '',
      table(
        ['phase', 'worst stall (ms)', 'p99 (ms)', 'mean (ms)', 'healthz answered', 'slowest healthz (ms)'],
        [
          ['idle, 2 s', f1(idleMax), '–', '–', idleProbe.count, f1(idleProbe.slowest)],
          [
            `the ${IMPORTS} POSTs received and answered (202 after ${answers.map((a) => a.s.toFixed(2)).join(', ')} s)`,
            f1(received.max),
            f1(received.p99),
            f1(received.mean),
            receivedProbe.count,
            f1(receivedProbe.slowest),
          ],
          [
            `the worker reads the files (${readS.toFixed(1)} s, 64 lines a turn)`,
            f1(read.max),
            f1(read.p99),
            f1(read.mean),
            readProbe.count,
            f1(readProbe.slowest),
          ],
          [
            'before issue 42: one file parsed line by line on the request (csv-parse per line)',
            f0(beforeMs),
            '',
            '',
            '',
            '',
          ],
        ],
      ),
      '',
      `Before, the api's thread was held for the whole parse of each file in turn (the last row, once per import: ${IMPORTS} files ≈ ${f0(beforeMs * IMPORTS)} ms with nothing else answered). Now a request costs one pass over the file's characters and one encryption; the parse runs in the import's activity, a chunk of lines per turn of the event loop.`,
    ].join('\n');
    console.log(body);
    writeGeneratedBlock(
      path.join(HERE, 'RESULTS.md'),
      'bench/import-stall.ts',
      '## Hostile imports against the api thread (bench/import-stall.ts)',
      body,
    );
  } finally {
    await stack.close();
  }
}

runBench(main);
