/**
 * Benchmark: every chart (GET /v1/charts/{name}, docs/charts.md) for a big tenant.
 *
 * One throwaway database: BENCH_TENANTS small tenants beside one tenant with BENCH_SUBSCRIPTIONS
 * (100,000) subscriptions and two years of their history and one of half its size
 * (bench/lib/big-tenant.ts, the overview bench's seed). The chart sums are built by the fold
 * job's own function (db/chart-fold.ts, timed), then each chart is asked of the operation's
 * handler (operations/charts/get.ts: the read-only tenant read of the sums, the pure
 * computation), BENCH_CHART_REQUESTS times after 2 warm-ups, for several windows and filters.
 *
 * Side by side in the same run: the full computation the sums replace (every history read,
 * test/helpers/chart-reference.ts), for a few charts; a fold pass after BENCH_FOLD_WRITES status
 * writes (what the worker pays each minute); and the EXPLAIN (ANALYZE, BUFFERS) plan of every
 * statement a chart read runs, in the tenant's read transaction. Written to bench/RESULTS.md.
 *
 * `npm run bench:charts` (DATABASE_URL, else an embedded Postgres).
 */
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs';
import { foldChartSums } from '../db/chart-fold';
import { createKnex } from '../db/knex';
import { readAsTenant, type TenantReader } from '../db/tenant-read';
import { withTenant } from '../db/tenant-tx';
import { CHARTS } from '../domain/charts/chart-list';
import { computeChart, readChartSource } from '../test/helpers/chart-reference';
import { dayOf, periodsBetween } from '../domain/charts/periods';
import { getChart } from '../operations/charts/get';
import type { OperationContext } from '../operations/types';
import { createLogger } from '../runtime/logger';
import { seedBigTenant } from './lib/big-tenant';
import { createBenchDatabase } from './lib/db';
import { f1, machine, table } from './lib/report';
import { writeGeneratedBlock } from './lib/section';

const num = (n: string, f: number) => (process.env[n] ? Number(process.env[n]) : f);
const SUBSCRIPTIONS = num('BENCH_SUBSCRIPTIONS', 100_000);
const TENANTS = num('BENCH_TENANTS', 20);
const REQUESTS = num('BENCH_CHART_REQUESTS', 20);
const FULL_REQUESTS = num('BENCH_FULL_REQUESTS', 3);
const FOLD_WRITES = num('BENCH_FOLD_WRITES', 1000);
const RESULTS = path.resolve('bench/RESULTS.md');
const log = (m: string) => console.error(`[bench:charts] ${m}`);

const loadBefore = os
  .loadavg()
  .map((x) => x.toFixed(2))
  .join(' ');
const bench = await createBenchDatabase({ tenants: TENANTS, log });
const owner = bench.db;
const big = bench.tenants[0].id;
const second = bench.tenants[1].id; // seeded, its sums left unbuilt: only the big tenant's are timed
const failed = async (e: unknown) => {
  await bench.drop();
  console.error(e);
  process.exit(1);
};
process.on('unhandledRejection', failed);
process.on('uncaughtException', failed);

let tSeed = performance.now();
await seedBigTenant(owner, big, SUBSCRIPTIONS, log);
const seedMs = performance.now() - tSeed;
tSeed = performance.now();
await seedBigTenant(owner, second, Math.round(SUBSCRIPTIONS / 2), log);
const seedSecondMs = performance.now() - tSeed;
await owner.raw('vacuum analyze');

const db = createKnex(bench.url, { max: 4 });
const tBuild = performance.now();
const built = await foldChartSums(db, big);
const buildMs = performance.now() - tBuild;
log(`sums of ${built} subscriptions built in ${f1(buildMs)} ms`);
await owner.raw('vacuum analyze');
const sumRows = (
  await owner.raw(
    `select (select count(*) from chart_day_sums where tenant_id = ?) as days,
            (select count(*) from chart_retention_sums where tenant_id = ?) as retention,
            (select count(*) from chart_ltv_sums where tenant_id = ?) as ltv`,
    [big, big, big],
  )
).rows[0] as Record<string, string>;

// A fold pass after writes, as the worker runs it each minute: status moves of active live subscriptions.
const movers = (
  await owner.raw(`select id from subscriptions where tenant_id = ? and status = 'active' and mode = 'live' limit ?`, [
    big,
    FOLD_WRITES,
  ])
).rows as { id: string }[];
for (const m of movers)
  await withTenant(db, big, (trx) => trx('subscriptions').where({ id: m.id }).update({ status: 'canceled' }));
const tPass = performance.now();
const recounted = await foldChartSums(db, big);
const passMs = performance.now() - tPass;
log(`a pass after ${movers.length} writes counted ${recounted} subscriptions again in ${f1(passMs)} ms`);

/** The operation's handler, as REST and the tool run it (the policy and the HTTP layer aside). */
function context(reader?: (r: TenantReader) => TenantReader): OperationContext {
  return {
    actor: { kind: 'api_key', tenantId: big } as never,
    tenantId: big,
    requestId: 'bench',
    services: { db } as never,
    log: createLogger('silent'),
    tx: (work) => withTenant(db, big, work),
    read: (work) => readAsTenant(db, big, (r) => work(reader ? reader(r) : r)),
    preferAsync: false,
    response: { headers: {} },
  };
}

const today = dayOf(Date.now());
const back = (days: number) => dayOf(Date.now() - days * 86_400_000);
const WINDOWS: { label: string; input: Record<string, string> }[] = [
  { label: 'two years by month', input: { from: back(729), to: today, resolution: 'month' } },
  { label: '90 days by day', input: { from: back(89), to: today, resolution: 'day' } },
  {
    label: 'a year by week, psp_a in DE',
    input: { from: back(364), to: today, resolution: 'week', provider: 'psp_a', country: 'DE' },
  },
];
const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)];
const times: Record<string, number[]> = {};
const inputs: Record<string, Record<string, string>> = {};
for (const w of WINDOWS) {
  for (const c of CHARTS) {
    inputs[`${c.name}, ${w.label}`] = { name: c.name, ...w.input };
    const t: number[] = [];
    for (let i = 0; i < 2 + REQUESTS; i++) {
      const t0 = performance.now();
      await getChart.handler(context(), { name: c.name, ...w.input } as never);
      if (i >= 2) t.push(performance.now() - t0);
    }
    times[`${c.name}, ${w.label}`] = t.sort((a, b) => a - b);
  }
}
// Converted into one currency (rates for every day of the window).
await owner.raw(
  `insert into exchange_rates (tenant_id, from_currency, to_currency, valid_from, rate)
   values (?, 'EUR', 'USD', ?, 1.08), (?, 'JPY', 'USD', ?, 0.0067)`,
  [big, back(800), big, back(800)],
);
for (const name of ['mrr', 'revenue_by_country'] as const) {
  const t: number[] = [];
  for (let i = 0; i < 2 + REQUESTS; i++) {
    const t0 = performance.now();
    await getChart.handler(context(), { name, ...WINDOWS[0].input, currency: 'USD' } as never);
    if (i >= 2) t.push(performance.now() - t0);
  }
  times[`${name}, two years by month, in USD`] = t.sort((a, b) => a - b);
  inputs[`${name}, two years by month, in USD`] = { name, ...WINDOWS[0].input, currency: 'USD' };
}

// The full computation the sums replace (every live history read and counted), same run.
const full: Record<string, number[]> = {};
for (const name of ['mrr', 'ltv', 'revenue_by_country'] as const) {
  const t: number[] = [];
  for (let i = 0; i < 1 + FULL_REQUESTS; i++) {
    const t0 = performance.now();
    const source = await readAsTenant(db, big, (r) => readChartSource(r, { mode: 'live' }));
    computeChart(name, { ...source, periods: periodsBetween(back(729), today, 'month'), resolution: 'month' });
    if (i >= 1) t.push(performance.now() - t0);
  }
  full[name] = t.sort((a, b) => a - b);
}

// The plans: every statement the slowest chart reads run (the three highest p95), captured from the handler,
// explained in the tenant's read transaction.
const slowest = Object.entries(times)
  .sort(([, a], [, b]) => pct(b, 95) - pct(a, 95))
  .slice(0, 3)
  .map(([k]) => k);
const plans: string[] = [];
for (const k of slowest) {
  const captured = new Map<string, { sql: string; values: unknown[] }>();
  const capture = (r: TenantReader): TenantReader => ({
    rows: (sql, values, opts) => {
      captured.set(sql, { sql, values });
      return r.rows(sql, values, opts);
    },
  });
  await getChart.handler(context(capture), inputs[k] as never);
  for (const q of captured.values()) {
    const rows = await readAsTenant(db, big, (r) => r.rows(`explain (analyze, buffers, costs off) ${q.sql}`, q.values));
    plans.push(`${k}:\n${q.sql.replace(/\s+/g, ' ').trim()}\n\n${rows.map((r) => r['QUERY PLAN']).join('\n')}`);
  }
}

await db.destroy();
await bench.drop();

const m = machine(bench.pgVersion);
const worst = Math.max(...Object.values(times).map((t) => pct(t, 95)));
const body = `Run: ${m.date} · ${m.nproc} cores (${m.cpuModel}), ${m.memoryGiB} GiB · Node ${m.node} · Postgres ${m.postgres} · load average before: ${loadBefore}, after: ${m.loadavg}. The machine is shared and noisy: read the times against the load average.

One tenant with ${SUBSCRIPTIONS.toLocaleString('en')} subscriptions and two years of history (five providers, four products, five buyer countries with one unknown), beside one of half its size and ${TENANTS - 2} small ones. Its chart sums: ${Number(sumRows.days).toLocaleString('en')} day rows, ${Number(sumRows.retention).toLocaleString('en')} retention rows, ${Number(sumRows.ltv).toLocaleString('en')} LTV rows. Seeding took ${f1(seedMs / 1000)} s (the big tenant) and ${f1(seedSecondMs / 1000)} s (the second). Building the big tenant's sums (the fold job's first pass for the tenant, every history counted) took ${f1(buildMs)} ms (each subscription's facts added once, at full dimension; the seven other ways to filter derived in SQL by one CUBE); a pass after ${movers.length.toLocaleString('en')} status writes (${recounted} subscriptions counted again) took ${f1(passMs)} ms.

Each chart as the operation answers it (\`operations/charts/get.ts\`: one read-only tenant read of the sums, the days a chart cannot tell apart added up in SQL, then \`domain/charts/from-sums.ts\`), ${REQUESTS} in sequence after 2 warm-ups:

${table(
  ['chart, window', 'p50 ms', 'p95 ms', 'max ms'],
  Object.entries(times).map(([k, t]) => [k, f1(pct(t, 50)), f1(pct(t, 95)), f1(t.at(-1)!)]),
  ['l', 'r', 'r', 'r'],
)}

**Charts p95: ${f1(worst)} ms at worst (aim < 300 ms).**

The full computation the sums replace, same run (every live history read and counted; two years by month, ${FULL_REQUESTS} after a warm-up):

${table(
  ['chart', 'full computation p50 / p95 ms', 'from the sums p50 / p95 ms', 'ratio at p95'],
  Object.entries(full).map(([k, t]) => {
    const s = times[`${k}, two years by month`];
    return [
      k,
      `${f1(pct(t, 50))} / ${f1(pct(t, 95))}`,
      `${f1(pct(s, 50))} / ${f1(pct(s, 95))}`,
      `${(pct(t, 95) / pct(s, 95)).toFixed(1)}×`,
    ];
  }),
  ['l', 'r', 'r', 'r'],
)}

<details><summary>Plans of every statement the three slowest chart reads run (${slowest.join('; ')}; EXPLAIN ANALYZE, BUFFERS, in the tenant's read transaction)</summary>

${plans.map((p) => '```\n' + p + '\n```').join('\n\n')}

</details>`;
writeGeneratedBlock(
  RESULTS,
  'bench/charts.ts',
  '## Charts for a tenant with 100,000 subscriptions (bench/charts.ts)',
  body,
);
fs.writeSync(1, `${body}\n`);
log(`written to ${RESULTS}`);
