/**
 * Benchmark: the support desk's customer page (GET /v1/customers/{app_user_id}) for a customer
 * with 5,000 timeline rows in a tenant of BENCH_SUBSCRIPTIONS (100,000) subscriptions.
 *
 * One throwaway database (bench/lib/db.ts) with one big tenant: a subscription and an
 * entitlement per app user, each subscription's first status change, and one customer whose
 * subscription received 2,500 provider events and made 2,500 status moves (5,000 timeline rows
 * with their entitlement row). The operation's database work and serialization (what
 * operations/customers/get.ts runs: the existence check, the entitlements, the grants, the first
 * timeline page) is timed in sequence in a tenant read, BENCH_REQUESTS times after a warm-up, for
 * that customer and for a customer with one purchase side by side; the timeline page's plan
 * (EXPLAIN ANALYZE, row-level security on) goes to bench/RESULTS.md.
 *
 * `npx tsx bench/customer-view.ts` (DATABASE_URL, else an embedded Postgres).
 */
import os from 'node:os';
import path from 'node:path';
import { customerEntitlements, customerExists, customerGrants, customerTimeline } from '../db/customers';
import { createKnex } from '../db/knex';
import { readAsTenant, type TenantReader } from '../db/tenant-read';
import { readerOf } from '../db/paging';
import { withTenant } from '../db/tenant-tx';
import { grantAsEntitlement, paidEntitlement, timelineRow } from '../operations/customers/schema';
import { createBenchDatabase } from './lib/db';
import { f1, machine, table } from './lib/report';
import { writeGeneratedBlock } from './lib/section';

const num = (n: string, f: number) => (process.env[n] ? Number(process.env[n]) : f);
const SUBSCRIPTIONS = num('BENCH_SUBSCRIPTIONS', 100_000);
const TIMELINE = num('BENCH_TIMELINE', 5_000);
const REQUESTS = num('BENCH_REQUESTS', 200);
const WARMUP = num('BENCH_WARMUP', 20);
const RESULTS = path.resolve('bench/RESULTS.md');
const log = (m: string) => console.error(`[bench:customer-view] ${m}`);

const loadBefore = os
  .loadavg()
  .map((x) => x.toFixed(2))
  .join(' ');
const bench = await createBenchDatabase({ tenants: 3, log });
const owner = bench.db;
const big = bench.tenants[0].id;
const t0 = Date.now();
await owner.raw(
  `insert into subscriptions (tenant_id, provider, external_id, customer_external_id, status, mode, app_user_id, current_period_end)
   select ?::uuid, 'psp_a', 'sub_' || g, 'cus_' || g, 'active', 'live', 'user_' || g, now() + interval '20 days'
     from generate_series(1, ?) g`,
  [big, SUBSCRIPTIONS],
);
await owner.raw(
  `insert into entitlements (tenant_id, app_user_id, provider, subscription_id, state, is_sandbox, expires_at)
   select tenant_id, app_user_id, provider, id, 'active', false, current_period_end from subscriptions where tenant_id = ?`,
  [big],
);
// The busy customer: user_1's subscription heard TIMELINE/2 events and moved TIMELINE/2 times.
const [{ id: busySub }] = (await owner('subscriptions')
  .where({ tenant_id: big, external_id: 'sub_1' })
  .select('id')) as {
  id: string;
}[];
await owner.raw(
  `insert into webhook_deliveries (tenant_id, provider, event_id, event_type, mode, status, payload, subscription_id, created_at)
   select ?::uuid, 'psp_a', 'evt_busy_' || g, 'invoice.payment_succeeded', 'live', 'processed', '{}'::jsonb, ?::uuid,
          now() - (g || ' minutes')::interval from generate_series(1, ?) g`,
  [big, busySub, TIMELINE / 2],
);
await owner.raw(
  `insert into subscription_changes (tenant_id, subscription_id, provider, mode, from_status, to_status, changed_at)
   select ?::uuid, ?::uuid, 'psp_a', 'live', 'active', 'past_due', now() - (g || ' minutes')::interval
     from generate_series(1, ?) g`,
  [big, busySub, TIMELINE / 2 - 1],
);
await owner.raw('analyze');
log(
  `seeded ${SUBSCRIPTIONS} subscriptions and a ${TIMELINE}-row customer in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
);

const db = createKnex(bench.url, { max: 2 });
const page = { limit: 50, offset: 0 };
async function view(appUserId: string) {
  const now = new Date().toISOString();
  return readAsTenant(db, big, async (reader) => {
    if (!(await customerExists(reader, appUserId))) throw new Error('missing');
    const paid = await customerEntitlements(reader, appUserId);
    const grants = await customerGrants(reader, appUserId);
    const timeline = await customerTimeline(reader, big, appUserId, page);
    return {
      entitlements: [
        ...grants.map((g) => grantAsEntitlement(big, g)),
        ...paid.map((r) => paidEntitlement(big, r, now)),
      ],
      timeline: { ...timeline, data: timeline.data.map((r) => timelineRow(big, r)) },
    };
  });
}
const busy = await view('user_1');
const busyTotal = busy.timeline.pagination.total ?? 0;
if (busyTotal < TIMELINE) throw new Error(`timeline total ${busyTotal}`);

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))];
async function measure(appUserId: string) {
  for (let i = 0; i < WARMUP; i++) await view(appUserId);
  const ms: number[] = [];
  for (let i = 0; i < REQUESTS; i++) {
    const s = process.hrtime.bigint();
    await view(appUserId);
    ms.push(Number(process.hrtime.bigint() - s) / 1e6);
  }
  return { p50: pct(ms, 0.5), p95: pct(ms, 0.95), max: Math.max(...ms) };
}
const busyMs = await measure('user_1');
const quietMs = await measure('user_2');

// The timeline page's plan, in the tenant transaction (RLS on), as pageFromSql runs it.
const plan = await withTenant(db, big, async (trx) => {
  // The page's own statement, explained: a reader that runs EXPLAIN in front of what pageFromSql sends.
  const plain = readerOf(trx);
  let lines: string[] = [];
  const explaining: TenantReader = {
    async rows(sql, values) {
      const r = await plain.rows(`explain (analyze, buffers, costs off) ${sql}`, values);
      if (!lines.length) lines = r.map((x) => String(x['QUERY PLAN']));
      return [];
    },
  };
  await customerTimeline(explaining, big, 'user_1', page);
  return lines.join('\n');
});

const m = machine(bench.pgVersion);
writeGeneratedBlock(
  RESULTS,
  'bench/customer-view.ts',
  '## Support desk: the customer page',
  `${m.date}; ${m.nproc} cores (${m.cpuModel}), Node ${m.node}, ${m.postgres}; load average ${loadBefore} before, ${m.loadavg} after.
One tenant of ${SUBSCRIPTIONS.toLocaleString('en')} subscriptions; the customer page's database work and serialization
(operations/customers/get.ts: existence, entitlements with why, grants, the first timeline page of 50), in sequence,
${REQUESTS} times after ${WARMUP} warm-up reads. Target: p95 < 150 ms for a customer with ${TIMELINE.toLocaleString('en')} timeline rows.

${table(
  ['customer', 'timeline rows', 'p50 ms', 'p95 ms', 'max ms'],
  [
    ['busy (user_1)', busyTotal, f1(busyMs.p50), f1(busyMs.p95), f1(busyMs.max)],
    [
      'one purchase (user_2)',
      (await view('user_2')).timeline.pagination.total ?? 0,
      f1(quietMs.p50),
      f1(quietMs.p95),
      f1(quietMs.max),
    ],
    ['ratio busy / one purchase', '', f1(busyMs.p50 / quietMs.p50), f1(busyMs.p95 / quietMs.p95), ''],
  ],
)}

The busy customer's timeline page (EXPLAIN ANALYZE, BUFFERS; row-level security on):

\`\`\`
${plan}
\`\`\``,
);
log(`busy p95 ${f1(busyMs.p95)} ms, one purchase p95 ${f1(quietMs.p95)} ms`);
await db.destroy();
await bench.drop();
