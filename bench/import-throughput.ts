/**
 * Import throughput under the providers' documented rate limits (issue: "Import 10,000 existing
 * psp_a subscriptions and 2,000 store identifiers"). A psp_a account (test mode) holding N
 * subscriptions the service never heard of, and a file of M Play purchase tokens, imported through
 * the real API (POST /v1/imports), a real worker, a real Temporal dev server and Postgres, with
 * every emulator enforcing its provider's documented limit and counting what it accepted. Per
 * import: wall time, subscriptions/s, provider calls/s as a fraction of the documented limit,
 * 429s, the worker process's memory sampled through the run (flat: page by page, nothing whole).
 *
 * The defaults are scaled down for a shared 2-core machine (2,000 psp_a subscriptions, 500 Play
 * tokens: a factor of 5 and 4); `--web 10000 --play 2000` runs the issue's numbers.
 *
 *   DATABASE_URL=postgres://… npx tsx bench/import-throughput.ts [--web 2000] [--play 500]
 */
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { attachToApp } from '../db/app-providers';
import { markConnectionProven } from '../db/connection-service';
import { withTenant } from '../db/tenant-tx';
import { IMPORT_ITEMS_IN_FLIGHT } from '../domain/import-concurrency';
import { perSecond, RATE_LIMITS } from '../domain/rate-limits';
import type { ProviderId } from '../domain/providers';
import { machine, table, f1, f2, f0 } from './lib/report';
import { writeGeneratedBlock } from './lib/section';
import { api, startSyncStack, type SyncStack } from './lib/sync-stack';
import { runBench } from './lib/run';

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const WEB = arg('web', 2000);
const PLAY = arg('play', 500);
const HERE = path.dirname(fileURLToPath(import.meta.url));
const log = (m: string) => console.log(`[import-throughput] ${m}`);
const MiB = (n: number) => n / 1024 / 1024;

/** Run `n` calls of `fn`, `width` at a time. */
async function pool(n: number, width: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < n) await fn(next++);
    }),
  );
}

/**
 * The same scale's run with each page's items one after another (before the items ran
 * IMPORT_ITEMS_IN_FLIGHT at a time), kept to read this run against.
 */
const BEFORE = { date: 'Thu Nov 26 04:15:27 UTC 2026', load: '27.64 30.40 29.26', web: 8.1, play: 4.1 };

interface Measured {
  label: string;
  provider: ProviderId;
  items: number;
  imported: number;
  refused: number;
  pages: number;
  wallS: number;
  calls: number;
  callSpanS: number;
  limited: number;
  rss: number[];
  heap: number[];
}

/** Whether each import ran at ≥ 0.9 of its provider's documented limit, or was held by it (429s). */
function aim(...runs: Measured[]): string {
  return runs
    .map((r) => {
      const doc = RATE_LIMITS[r.provider].test;
      const fraction = r.calls / r.callSpanS / perSecond(doc);
      const met = fraction >= 0.9 || r.limited > 0;
      return `${r.label}: ${f2(fraction)} of the limit, **${met ? 'met' : 'not met'}**.`;
    })
    .join(' ');
}

/** Start an import, sample memory while it runs, and read the emulator's counters after it. */
async function measure(
  stack: SyncStack,
  key: string,
  label: string,
  provider: ProviderId,
  items: number,
  body: unknown,
): Promise<Measured> {
  await stack.control(provider, 'POST', '/rate-limit', { enabled: true }); // counters from zero
  const rss: number[] = [];
  const heap: number[] = [];
  const sample = () => {
    const m = process.memoryUsage();
    rss.push(MiB(m.rss));
    heap.push(MiB(m.heapUsed));
  };
  sample();
  const t0 = performance.now();
  const started = await api(stack.apiUrl, '/imports', key, { method: 'POST', body: JSON.stringify(body) });
  if (started.status !== 202) throw new Error(`POST /imports → ${started.status} ${JSON.stringify(started.body)}`);
  let done: any;
  for (;;) {
    done = (await api(stack.apiUrl, `/imports/${started.body.id}`, key)).body;
    sample();
    if (done.status !== 'running') break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  const wallS = (performance.now() - t0) / 1000;
  if (done.status !== 'succeeded') throw new Error(`${label}: ${JSON.stringify(done)}`);
  const seen = await stack.control(provider, 'GET', '/rate-limit');
  const s = seen.scopes.find((x: { mode?: string }) => !x.mode || x.mode === 'test') ?? seen.scopes[0];
  log(`${label}: ${done.imported} imported, ${done.refused_count} refused, ${wallS.toFixed(1)} s`);
  return {
    label,
    provider,
    items,
    imported: done.imported,
    refused: done.refused_count,
    pages: done.pages,
    wallS,
    calls: s?.accepted ?? 0,
    callSpanS: s && s.last_at > s.first_at ? (s.last_at - s.first_at) / 1000 : NaN,
    limited: s?.limited ?? 0,
    rss,
    heap,
  };
}

async function main() {
  const stack = await startSyncStack(log);
  const loadBefore = os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
  try {
    const t = await stack.tenant({
      name: 'bench-import',
      providers: ['psp_a', 'store_android'],
      modes: ['test'],
      products: 1,
    });
    await withTenant(stack.db, t.tenantId, async (trx) => {
      for (const c of await trx('provider_connections').select('id'))
        await markConnectionProven(trx, c.id, 'control_api');
      const app = await trx('apps').first('id');
      await attachToApp(trx, app.id, 'store_android');
    });
    // psp_a sells the product (its payment link made by a sync), then N buyers whose notifications go nowhere.
    const report = await api(stack.apiUrl, '/sync', t.key);
    const synced = await api(stack.apiUrl, '/sync', t.key, {
      method: 'POST',
      body: JSON.stringify({ confirm_count: report.body.confirm_count }),
    });
    if (synced.status !== 200) throw new Error(`sync → ${JSON.stringify(synced.body).slice(0, 300)}`);
    const account = t.accounts.psp_a!.account;
    const seedT0 = performance.now();
    await pool(WEB, 8, async (i) => {
      await stack.control('psp_a', 'POST', '/checkout', {
        sku: 'bench_0000',
        email: `b${i}@example.com`,
        target: 'http://127.0.0.1:9/lost',
        account,
        mode: 'test',
        app_user_id: `web_${i}`,
      });
    });
    const tokens: string[] = [];
    await pool(PLAY, 8, async (i) => {
      const r = await stack.control('store_android', 'POST', '/sandbox-purchase', {
        product_id: 'bench-0',
        account: t.accounts.store_android!.account,
        app_user_id: `play_${i}`,
      });
      tokens[i] = r.purchase_token;
    });
    log(
      `seeded ${WEB} psp_a subscriptions and ${PLAY} Play purchases in ${((performance.now() - seedT0) / 1000).toFixed(1)} s`,
    );

    const web = await measure(stack, t.key, `psp_a list, ${WEB} subscriptions`, 'psp_a', WEB, { provider: 'psp_a' });
    const csv = ['purchase_token,app_user_id', ...tokens.map((tok, i) => `${tok},play_${i}`)].join('\n');
    const play = await measure(stack, t.key, `Play lookups, ${PLAY} tokens`, 'store_android', PLAY, {
      provider: 'store_android',
      csv,
    });
    const premium = Number(
      (await stack.db('entitlements').where({ tenant_id: t.tenantId, state: 'active' }).count('* as n'))[0].n,
    );

    const rows = [web, play].map((r) => {
      const doc = RATE_LIMITS[r.provider].test;
      const callRate = r.calls / r.callSpanS;
      return [
        r.label,
        `${doc.limit} / ${doc.windowMs / 1000} s`,
        r.imported,
        r.refused,
        r.pages,
        f1(r.wallS),
        f1(r.imported / r.wallS),
        r.calls,
        f1(callRate),
        `**${f2(callRate / perSecond(doc))}**`,
        r.limited,
        `${f0(r.rss[0])} → ${f0(Math.max(...r.rss))} → ${f0(r.rss[r.rss.length - 1])}`,
        `${f0(r.heap[0])} → ${f0(Math.max(...r.heap))} → ${f0(r.heap[r.heap.length - 1])}`,
      ];
    });
    const m = machine(stack.pgVersion);
    const body = [
      `Run: ${m.date} · ${m.nproc} cores (${m.cpuModel}), ${m.memoryGiB} GiB · Node ${m.node} · Postgres ${m.postgres} · load average before: ${loadBefore}, after: ${m.loadavg}. The machine is shared and noisy: read the absolute times against the load average.`,
      '',
      `Scale: ${WEB} psp_a subscriptions and ${PLAY} Play purchase tokens (the issue's 10,000 and 2,000 divided by ${f1(10000 / WEB)} and ${f1(2000 / PLAY)}, for this shared machine; \`--web 10000 --play 2000\` runs them whole). Every emulator enforces its provider's documented limit (test mode: psp_a 25/s; Play 3,000/min). The API, the worker (its activities and the customers' lifecycle workflows), the emulators and the pollers share one process, whose memory is sampled once a second (first → peak → last, MiB).`,
      '',
      table(
        [
          'import',
          'documented limit',
          'imported',
          'refused',
          'pages',
          'wall s',
          'subscriptions/s',
          'provider calls',
          'calls/s',
          'fraction of limit',
          '429s',
          'RSS MiB',
          'heap MiB',
        ],
        rows,
      ),
      '',
      `Active entitlements after both: ${premium} (of ${WEB + PLAY} buyers). The issue's aim: ≥ 0.9 of the documented limit, or limited by it. ${aim(web, play)}`,
      '',
      `Before and after, at this scale: items one at a time (${BEFORE.date}, load average ${BEFORE.load}) against ${IMPORT_ITEMS_IN_FLIGHT} at a time (this run). The two runs met different loads (beside each): part of a ratio may be the machine.`,
      '',
      table(
        ['import', 'one at a time: subscriptions/s', `${IMPORT_ITEMS_IN_FLIGHT} at a time: subscriptions/s`, 'ratio'],
        [
          [web.label, f1(BEFORE.web), f1(web.imported / web.wallS), `×${f1(web.imported / web.wallS / BEFORE.web)}`],
          [
            play.label,
            f1(BEFORE.play),
            f1(play.imported / play.wallS),
            `×${f1(play.imported / play.wallS / BEFORE.play)}`,
          ],
        ],
      ),
      '',
      `What paces each: the psp_a list returns 100 subscriptions a call, so 0.9 of its 25 calls/s would list 2,250 subscriptions a second; no import of it reaches that, because the service's own work per subscription (its events signalled to its customer's lifecycle workflow, applied by it, the item's outcome written) is far slower than a list call, on this machine by two orders of magnitude: its fraction of the limit says the list is not the bottleneck, and its subscriptions/s is the number to read. A Play lookup is one call per token, so there the allowance (50 calls/s sustained) can bind. A page's items are handed over ${IMPORT_ITEMS_IN_FLIGHT} at a time (domain/import-concurrency.ts; one customer's items in order), so a page waits on its slowest few round trips rather than their sum; pages are still read one after another (the position is the workflow's state), so one import uses one allowance at a time and leaves the rest of the provider's allowance to the sync and webhooks' re-reads. On this machine, loaded far past its two cores (see the load average), both rates are a fraction of what the same code reaches unloaded.`,
      '',
      "Memory: the run holds one page (100 subscriptions, or 25 file lines) at a time, and continues as new every 50 pages, so the history stays a few pages long; the peak RSS above includes the emulators' own copy of every subscription (they live in this process).",
      '',
      'Not yet measured: App Store lookups (3,600 per rolling hour: 2,000 transactions take at least 33 minutes by the limit alone, so at 2,000 they measure the limit, not the service). The scheduled reconciliation of 100,000 subscriptions: `bench/reconcile.ts`.',
    ].join('\n');
    writeGeneratedBlock(
      path.join(HERE, 'RESULTS.md'),
      'bench/import-throughput.ts',
      '## Import throughput under provider rate limits (bench/import-throughput.ts)',
      body,
    );
    console.log(body);
  } finally {
    await stack.close();
  }
}

runBench(main);
