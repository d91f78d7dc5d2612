/**
 * Benchmark: the entitlements page (GET /v1/entitlements's database work, limit 50) through the
 * plain-knex path the api uses (paginate()) against the same statement through the objection
 * model, interleaved in one process on one throwaway database, so the ratio is side by side.
 * `npx tsx bench/models-vs-knex.ts` (DATABASE_URL, else an embedded Postgres).
 * BENCH_TENANTS (100), BENCH_ROUNDS (3), BENCH_SECONDS (2), BENCH_CONCURRENCY (8).
 */
import os from 'node:os';
import { Entitlement } from '../db/models';
import { createKnex } from '../db/knex';
import { withTenant } from '../db/tenant-tx';
import { paginate } from '../api/operations/paging';
import * as s from '../api/operations/serializers';
import { createBenchDatabase } from './lib/db';

const num = (n: string, f: number) => (process.env[n] ? Number(process.env[n]) : f);
const TENANTS = num('BENCH_TENANTS', 100);
const ROUNDS = num('BENCH_ROUNDS', 3);
const SECONDS = num('BENCH_SECONDS', 2);
const CONCURRENCY = num('BENCH_CONCURRENCY', 8);

const bench = await createBenchDatabase({ tenants: TENANTS, log: (m) => console.error(m) });
const db = createKnex(bench.url, { max: CONCURRENCY });
const tenantAt = (i: number) => bench.tenants[i % bench.tenants.length].id;

const viaKnex = (tenantId: string) =>
  withTenant(db, tenantId, (trx) =>
    paginate(trx('entitlements').leftJoin('products', 'products.id', 'entitlements.product_id'), { limit: 50, offset: 0, table: 'entitlements', columns: ['entitlements.*', 'products.sku'] }, s.entitlement),
  );

const viaModel = (tenantId: string) =>
  withTenant(db, tenantId, async (trx) => {
    const rows = await Entitlement.query(trx)
      .leftJoin('products', 'products.id', 'entitlements.product_id')
      .select('entitlements.*', 'products.sku', Entitlement.query(trx).count('*').as('__total'))
      .orderBy([{ column: 'entitlements.created_at', order: 'desc' }, { column: 'entitlements.id', order: 'desc' }])
      .limit(50)
      .offset(0);
    const total = rows.length ? Number((rows[0] as unknown as { __total: number }).__total) : 0;
    return { data: rows.map((r) => s.entitlement(r)), pagination: { limit: 50, offset: 0, total, has_more: rows.length < total } };
  });

async function run(call: (t: string) => Promise<unknown>): Promise<{ rps: number; p50: number }> {
  const lat: number[] = [];
  const end = Date.now() + SECONDS * 1000;
  let i = 0;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (Date.now() < end) {
      const t0 = performance.now();
      await call(tenantAt(i++));
      lat.push(performance.now() - t0);
    }
  }));
  lat.sort((a, b) => a - b);
  return { rps: lat.length / SECONDS, p50: lat[Math.floor(lat.length / 2)] };
}

try {
  // Sanity: both paths answer the same page.
  const [a, b] = [await viaKnex(tenantAt(0)), await viaModel(tenantAt(0))];
  if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error('knex and model pages differ');
  await run(viaKnex); await run(viaModel); // warm-up
  const res = { knex: [] as { rps: number; p50: number }[], model: [] as { rps: number; p50: number }[] };
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? (['knex', 'model'] as const) : (['model', 'knex'] as const);
    for (const k of order) res[k].push(await run(k === 'knex' ? viaKnex : viaModel));
  }
  const med = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  const kr = med(res.knex.map((x) => x.rps));
  const mr = med(res.model.map((x) => x.rps));
  console.log(JSON.stringify({
    date: new Date().toISOString(), cpus: os.cpus().length, tenants: TENANTS, rounds: ROUNDS, seconds: SECONDS, concurrency: CONCURRENCY,
    knex_rps: Math.round(kr), model_rps: Math.round(mr), model_cost_pct: Math.round((kr / mr - 1) * 1000) / 10,
    knex_p50_ms: med(res.knex.map((x) => x.p50)).toFixed(2), model_p50_ms: med(res.model.map((x) => x.p50)).toFixed(2),
  }));
} finally {
  await db.destroy();
  await bench.drop();
}
