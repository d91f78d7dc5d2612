/**
 * Import throughput under the providers' documented rate limits (issue: "Import 10,000 existing
 * psp_a subscriptions and 2,000 store identifiers"). A psp_a account (test mode) holding N
 * subscriptions the service never heard of, a file of M Play purchase tokens and one of K App
 * Store original transaction ids (sandbox), imported through the real API (POST /v1/imports), a
 * real worker, a real Temporal dev server and Postgres, with every emulator enforcing its
 * provider's documented limit and counting what it accepted. Per import: wall time, where it
 * went (before the first provider call, between the first and last, after the last),
 * subscriptions/s, provider calls/s as a fraction of the documented limit, 429s, the process's
 * memory sampled through the run (flat: page by page, nothing whole).
 *
 * The defaults are scaled down for a shared 2-core machine (2,000 psp_a subscriptions, 500 Play
 * tokens, 100 App Store transactions); `--web 10000 --play 2000 --ios 2000` runs the issue's
 * numbers. A count of 0 leaves that import out.
 *
 *   DATABASE_URL=postgres://… npx tsx bench/import-throughput.ts [--web 2000] [--play 500] [--ios 100]
 */
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { attachToApp } from '../db/app-providers';
import { markConnectionProven } from '../db/connection-service';
import { withTenant } from '../db/tenant-tx';
import { IMPORT_ITEMS_IN_FLIGHT, IMPORT_STORE_LINES_IN_FLIGHT } from '../domain/import-concurrency';
import { limitOf, perSecond, type CallKind, type RateLimit } from '../domain/rate-limits';
import type { ProviderId } from '../domain/providers';
import { machine, table, f1, f2, f0 } from './lib/report';
import { writeGeneratedBlock } from './lib/section';
import { api, startSyncStack, type SyncStack } from './lib/sync-stack';
import { runBench } from './lib/run';
import { numArg } from './lib/args';

const WEB = numArg('web', 2000);
const PLAY = numArg('play', 500);
const IOS = numArg('ios', 100);
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
 * The store import before it paced its lookups (8 lines at a time, pages of 25, three
 * transactions a line), run in the same session on the same machine, kept to read this run
 * against: Play lookups at the same count, rate over the span of the emulator's first to last
 * accepted call.
 */
const BEFORE = {
  date: 'Thu Nov 26 06:25 UTC 2026',
  load: '18.37 19.18 12.41 → 26.36 22.16 14.60',
  play: { items: 2000, wallS: 132.1, callsPerS: 2000 / 130.3 },
};

interface Measured {
  label: string;
  provider: ProviderId;
  limit: RateLimit;
  items: number;
  imported: number;
  refused: number;
  pages: number;
  wallS: number;
  /** From the POST: its answer, the first and last provider call the emulator accepted, the import's finish (s). */
  postS: number;
  firstCallS: number;
  lastCallS: number;
  finishS: number;
  calls: number;
  callSpanS: number;
  /** Calls/s between the samples where the emulator's count passed 10 % and 90 % of the run's calls. */
  sustained: number;
  limited: number;
  rss: number[];
  heap: number[];
}

/**
 * Whether each import ran at ≥ 0.9 of its provider's documented limit (a store import: its
 * sustained rate). 429s are not "held by the limit": the pacer aims under it, so a 429 is
 * arrivals bunched past its margin, and costs the run the held time.
 */
function aim(...runs: Measured[]): string {
  return runs
    .map((r) => {
      const fraction = (r.provider === 'psp_a' ? r.calls / r.callSpanS : r.sustained) / perSecond(r.limit);
      // A list call brings 100 subscriptions: its limit cannot bind, so the aim is read as the service's own rate.
      if (r.provider === 'psp_a')
        return `${r.label}: ${f2(fraction)} of the limit, which cannot bind (100 subscriptions a call): the aim does not apply; the rate is the service's own work per subscription, ${f1(r.imported / r.wallS)} subscriptions/s.`;
      const met = fraction >= 0.9;
      return `${r.label}: ${f2(fraction)} of the limit${r.limited ? ` (${r.limited} 429s)` : ''}, **${met ? 'met' : 'not met'}**.`;
    })
    .join(' ');
}

/** Start an import, sample memory while it runs, and read the emulator's counters after it. */
async function measure(
  stack: SyncStack,
  key: string,
  label: string,
  provider: ProviderId,
  kind: CallKind,
  items: number,
  body: unknown,
  /** The emulator's scope holding the calls measured (default: the test-mode one). */
  scopeKey?: string,
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
  const e0 = Date.now();
  const started = await api(stack.apiUrl, '/imports', key, { method: 'POST', body: JSON.stringify(body) });
  if (started.status !== 202) throw new Error(`POST /imports → ${started.status} ${JSON.stringify(started.body)}`);
  const postS = (Date.now() - e0) / 1000;
  const pick = (seen: { scopes: any[] }) =>
    scopeKey
      ? seen.scopes.find((x: { key: string }) => x.key === scopeKey)
      : (seen.scopes.find((x: { mode?: string }) => !x.mode || x.mode === 'test') ?? seen.scopes[0]);
  // The emulator's accepted count once a second: the sustained rate, without the start's burst and the end.
  const counted: [number, number][] = [];
  let done: any;
  for (;;) {
    done = (await api(stack.apiUrl, `/imports/${started.body.id}`, key)).body;
    counted.push([Date.now(), pick(await stack.control(provider, 'GET', '/rate-limit'))?.accepted ?? 0]);
    sample();
    if (done.status !== 'running') break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  const wallS = (performance.now() - t0) / 1000;
  if (done.status !== 'succeeded') throw new Error(`${label}: ${JSON.stringify(done)}`);
  const seen = await stack.control(provider, 'GET', '/rate-limit');
  const s = pick(seen);
  const total = s?.accepted ?? 0;
  const at = (fraction: number) => counted.find(([, n]) => n >= total * fraction);
  const [a, b] = [at(0.1), at(0.9)];
  const sustained = a && b && b[0] > a[0] ? (b[1] - a[1]) / ((b[0] - a[0]) / 1000) : NaN;
  const since = (at: number | null | undefined) => (at ? (at - e0) / 1000 : NaN);
  const finishS = since(new Date(done.finished_at).getTime());
  log(
    `${label}: ${done.imported} imported, ${done.refused_count} refused, ${wallS.toFixed(1)} s (post ${postS.toFixed(1)} s, first call ${since(s?.first_at).toFixed(1)} s, last ${since(s?.last_at).toFixed(1)} s, finished ${finishS.toFixed(1)} s)`,
  );
  return {
    label,
    provider,
    limit: limitOf(provider, 'test', kind),
    items,
    imported: done.imported,
    refused: done.refused_count,
    pages: done.pages,
    wallS,
    postS,
    firstCallS: since(s?.first_at),
    lastCallS: since(s?.last_at),
    finishS,
    calls: s?.accepted ?? 0,
    sustained,
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
      providers: ['psp_a', 'store_android', 'store_ios'],
      modes: ['test'],
      products: 1,
    });
    await withTenant(stack.db, t.tenantId, async (trx) => {
      for (const c of await trx('provider_connections').select('id'))
        await markConnectionProven(trx, c.id, 'control_api');
      const app = await trx('apps').first('id');
      await attachToApp(trx, app.id, 'store_android');
      await attachToApp(trx, app.id, 'store_ios');
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
    const transactions: string[] = [];
    await pool(IOS, 8, async (i) => {
      const r = await stack.control('store_ios', 'POST', '/sandbox-purchase', {
        product_id: 'com.example.bench.p0',
        account: t.accounts.store_ios!.account,
        app_user_id: `ios_${i}`,
      });
      transactions[i] = r.transaction_id;
    });
    log(
      `seeded ${WEB} psp_a subscriptions, ${PLAY} Play and ${IOS} App Store purchases in ${((performance.now() - seedT0) / 1000).toFixed(1)} s`,
    );

    const runs: Measured[] = [];
    if (WEB > 0)
      runs.push(
        await measure(stack, t.key, `psp_a list, ${WEB} subscriptions`, 'psp_a', 'default', WEB, { provider: 'psp_a' }),
      );
    if (PLAY > 0)
      runs.push(
        await measure(stack, t.key, `Play lookups, ${PLAY} tokens`, 'store_android', 'lookup', PLAY, {
          provider: 'store_android',
          csv: ['purchase_token,app_user_id', ...tokens.map((tok, i) => `${tok},play_${i}`)].join('\n'),
        }),
      );
    if (IOS > 0)
      runs.push(
        await measure(
          stack,
          t.key,
          `App Store lookups (sandbox), ${IOS} transactions`,
          'store_ios',
          'lookup',
          IOS,
          {
            provider: 'store_ios',
            csv: ['original_transaction_id,app_user_id', ...transactions.map((id, i) => `${id},ios_${i}`)].join('\n'),
          },
          'server-api:test:subscriptions',
        ),
      );
    const premium = Number(
      (await stack.db('entitlements').where({ tenant_id: t.tenantId, state: 'active' }).count('* as n'))[0].n,
    );

    const rows = runs.map((r) => {
      const callRate = r.calls / r.callSpanS;
      return [
        r.label,
        `${r.limit.limit} / ${r.limit.windowMs / 1000} s`,
        r.imported,
        r.refused,
        r.pages,
        f1(r.wallS),
        f1(r.imported / r.wallS),
        r.calls,
        f1(callRate),
        f1(r.sustained),
        `**${f2((r.provider === 'psp_a' ? callRate : r.sustained) / perSecond(r.limit))}**`,
        r.limited,
        `${f0(r.rss[0])} → ${f0(Math.max(...r.rss))} → ${f0(r.rss[r.rss.length - 1])}`,
        `${f0(r.heap[0])} → ${f0(Math.max(...r.heap))} → ${f0(r.heap[r.heap.length - 1])}`,
      ];
    });
    const phases = runs.map((r) => [
      r.label,
      f1(r.postS),
      f1(r.firstCallS),
      f1(r.lastCallS - r.firstCallS),
      f1(r.finishS - r.lastCallS),
      f1(r.wallS - r.finishS),
      f1(r.wallS),
    ]);
    const play = runs.find((r) => r.provider === 'store_android');
    const m = machine(stack.pgVersion);
    const body = [
      `Run: ${m.date} · ${m.nproc} cores (${m.cpuModel}), ${m.memoryGiB} GiB · Node ${m.node} · Postgres ${m.postgres} · load average before: ${loadBefore}, after: ${m.loadavg}. The machine is shared and noisy: read the absolute times against the load average.`,
      '',
      `Scale: ${WEB} psp_a subscriptions, ${PLAY} Play purchase tokens, ${IOS} App Store transactions (the issue's numbers are 10,000 and 2,000 store identifiers; \`--web 10000 --play 2000 --ios 2000\` runs them). Every emulator enforces its provider's documented limit (test mode: psp_a 25/s; Play 3,000/min; the App Store Server API's lookups 5/s in the sandbox, 10 % of production's 50/s). The API, the worker (its activities and the customers' lifecycle workflows), the emulators and the pollers share one process, whose memory is sampled once a second (first → peak → last, MiB).`,
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
          'sustained calls/s',
          'fraction of limit',
          '429s',
          'RSS MiB',
          'heap MiB',
        ],
        rows,
      ),
      '',
      `Active entitlements after all: ${premium} (of ${WEB + PLAY + IOS} buyers). The issue's aim: ≥ 0.9 of the documented limit where it can bind. ${aim(...runs)} Calls/s is over the span from the emulator's first to its last accepted call; sustained calls/s between the once-a-second samples of the emulator's count where it passed 10 % and 90 % of the run's calls (without the pacer's allowed burst at the start, 150 calls for Play, and the last page's end), and the fraction of the limit of a store import is of that rate. For the App Store the calls counted are Get All Subscription Statuses; each lookup also makes one Get Transaction Info call, on that endpoint's own allowance of the same figure.`,
      '',
      'Where the wall time went (s from the POST): its answer, the first provider call, the span of the calls, the finish after the last call, and the bench noticing the finish (it polls once a second).',
      '',
      table(['import', 'POST answered', 'first call', 'calls span', 'last call → finished', 'poll', 'wall'], phases),
      ...(play && BEFORE.play.items
        ? [
            '',
            `Play before and after, same session: lookups unpaced, 8 lines at a time, pages of 25, three transactions a line (${BEFORE.date}, load average ${BEFORE.load}, ${BEFORE.play.items} tokens) against paced at the limit, ${IMPORT_STORE_LINES_IN_FLIGHT} lines at a time, pages of 500, one transaction a line (this run).`,
            '',
            table(
              ['Play import', 'tokens', 'wall s', 'calls/s (first to last call)', 'fraction of limit'],
              [
                [
                  'before',
                  BEFORE.play.items,
                  f1(BEFORE.play.wallS),
                  f1(BEFORE.play.callsPerS),
                  f2(BEFORE.play.callsPerS / perSecond(play.limit)),
                ],
                [
                  'after',
                  play.items,
                  f1(play.wallS),
                  f1(play.calls / play.callSpanS),
                  f2(play.calls / play.callSpanS / perSecond(play.limit)),
                ],
              ],
            ),
          ]
        : []),
      '',
      `What paces each: the psp_a list returns 100 subscriptions a call, so 0.9 of its 25 calls/s would list 2,250 subscriptions a second; no import of it comes near, because the service's own work per subscription (its events signalled to its customer's lifecycle workflow, ${IMPORT_ITEMS_IN_FLIGHT} customers at a time, then the page's outcomes in one write) is far slower than a list call: its fraction of the limit says the list is not the bottleneck, and its subscriptions/s is the number to read. A store lookup is one call per identifier, so there the allowance binds: each lookup waits for the store's pacer (Play on its one quota bucket, the App Store on the Server API's allowance), ${IMPORT_STORE_LINES_IN_FLIGHT} lines in flight, 500 lines a page.`,
      '',
      "Memory: the run holds one page (100 subscriptions, or 500 file lines) at a time, and continues as new every 50 pages, so the history stays a few pages long; the peak RSS above includes the emulators' own copy of every subscription and purchase (they live in this process).",
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
