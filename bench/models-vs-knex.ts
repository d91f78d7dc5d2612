/**
 * Benchmark, objection models against plain knex, interleaved in one process on one throwaway
 * database, so each ratio is side by side:
 * - entitlements: GET /v1/entitlements's database work (limit 50) through paginate() on knex
 *   against the same statement through the Entitlement model;
 * - products: GET /v1/products's database work, the page through paginate() and then the
 *   provider refs of the page by a hand-written knex query against the Product model's
 *   relation (fetchGraph);
 * - coupons: GET /v1/coupons's database work, the same way with the Coupon model's counterparts;
 * - subscribers: GET /v1/subscribers's database work (join on products for the sku), like
 *   entitlements, through the Subscription model.
 * BENCH_PAGE=entitlements|products|coupons|subscribers runs one of them.
 * `npx tsx bench/models-vs-knex.ts` (DATABASE_URL, else an embedded Postgres).
 * BENCH_TENANTS (100), BENCH_ROUNDS (3), BENCH_SECONDS (2), BENCH_CONCURRENCY (8).
 */
import os from 'node:os';
import { Coupon, Entitlement, Product, Subscription } from '../db/models';
import { createKnex } from '../db/knex';
import { withTenant } from '../db/tenant-tx';
import { paginate } from './lib/builder-page';
import { createBenchDatabase } from './lib/db';
import { serializeProduct } from '../operations/products/schema';
import { serializeCoupon } from '../operations/coupons/list';
import { serializeEntitlement } from '../operations/entitlements/schema';
import { serializeSubscription } from '../operations/subscribers/list';

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
    paginate(
      trx('entitlements').leftJoin('products', 'products.id', 'entitlements.product_id'),
      { limit: 50, offset: 0, table: 'entitlements', columns: ['entitlements.*', 'products.sku'] },
      serializeEntitlement,
    ),
  );

const viaModel = (tenantId: string) =>
  withTenant(db, tenantId, async (trx) => {
    const rows = await Entitlement.query(trx)
      .leftJoin('products', 'products.id', 'entitlements.product_id')
      .select('entitlements.*', 'products.sku', Entitlement.query(trx).count('*').as('__total'))
      .orderBy([
        { column: 'entitlements.created_at', order: 'desc' },
        { column: 'entitlements.id', order: 'desc' },
      ])
      .limit(50)
      .offset(0);
    const total = rows.length ? Number((rows[0] as unknown as { __total: number }).__total) : 0;
    return {
      data: rows.map((r) => serializeEntitlement(r)),
      pagination: { limit: 50, offset: 0, total, has_more: rows.length < total },
    };
  });

// Two provider refs per product (test and live at psp_a), so the relation has rows to fetch.
await bench.db.raw(`
  insert into product_provider_refs (tenant_id, product_id, provider, mode, external_id, synced_version, synced_at)
  select p.tenant_id, p.id, 'psp_a', m, 'prod_' || m || '_' || p.sku, 1, now()
  from products p cross join unnest(array['test','live']) m`);

// Five coupons per tenant with two provider counterparts each.
await bench.db.raw(`
  insert into coupons (tenant_id, code, percent_off, duration)
  select t.id, 'CODE' || k, 10 * k, 'once' from tenants t cross join generate_series(1, 5) k`);
await bench.db.raw(`
  insert into coupon_counterparts (tenant_id, coupon_id, provider, kind, external_id)
  select c.tenant_id, c.id, p, 'coupon', p || '_' || c.code from coupons c cross join unnest(array['psp_a','psp_b']) p`);

const couponsViaKnex = (tenantId: string) =>
  withTenant(db, tenantId, async (trx) => {
    const page = await paginate(trx('coupons'), { limit: 50, offset: 0, table: 'coupons' }, (r: any) => r);
    const ids = page.data.map((c: any) => c.id);
    const cps = ids.length ? await trx('coupon_counterparts').whereIn('coupon_id', ids) : [];
    return {
      ...page,
      data: page.data.map((c: any) =>
        serializeCoupon(
          c,
          cps.filter((x: any) => x.coupon_id === c.id),
        ),
      ),
    };
  });

const couponsViaModel = (tenantId: string) =>
  withTenant(db, tenantId, async (trx) => {
    const page = await paginate(trx('coupons'), { limit: 50, offset: 0, table: 'coupons' }, (r: any) => r);
    const coupons = await Coupon.fetchGraph(page.data as Coupon[], 'counterparts', { transaction: trx });
    return { ...page, data: coupons.map((c) => serializeCoupon(c, c.counterparts ?? [])) };
  });

// 60 subscriptions per tenant on its products.
await bench.db.raw(`
  insert into subscriptions (tenant_id, provider, mode, status, external_id, product_id, email)
  select p.tenant_id, 'psp_a', 'live', 'active', 'sub_' || p.sku || '_' || g, p.id, 'u' || g || '@example.com'
  from products p cross join generate_series(1, 20) g`);

const subscribersViaKnex = (tenantId: string) =>
  withTenant(db, tenantId, (trx) =>
    paginate(
      trx('subscriptions').leftJoin('products', 'products.id', 'subscriptions.product_id'),
      { limit: 50, offset: 0, table: 'subscriptions', columns: ['subscriptions.*', 'products.sku'] },
      serializeSubscription,
    ),
  );

// What operations/subscribers/list.ts does: paginate() over the model's query builder.
const subscribersViaModel = (tenantId: string) =>
  withTenant(db, tenantId, (trx) =>
    paginate(
      Subscription.query(trx).leftJoin('products', 'products.id', 'subscriptions.product_id') as any,
      { limit: 50, offset: 0, table: 'subscriptions', columns: ['subscriptions.*', 'products.sku'] },
      serializeSubscription,
    ),
  );

const productsPage = (trx: Parameters<Parameters<typeof withTenant>[2]>[0]) =>
  paginate(trx('products'), { limit: 50, offset: 0, table: 'products' }, (r: any) => r);

const productsViaKnex = (tenantId: string) =>
  withTenant(db, tenantId, async (trx) => {
    const page = await productsPage(trx);
    const ids = page.data.map((p: any) => p.id);
    const refs = ids.length
      ? await trx('product_provider_refs').whereIn('product_id', ids).orderBy(['provider', 'mode'])
      : [];
    const by = new Map<string, any[]>();
    for (const r of refs) by.set(r.product_id, [...(by.get(r.product_id) ?? []), r]);
    return { ...page, data: page.data.map((p: any) => serializeProduct(p, by.get(p.id) ?? [])) };
  });

const productsViaModel = (tenantId: string) =>
  withTenant(db, tenantId, async (trx) => {
    const page = await productsPage(trx);
    const products = await Product.fetchGraph(page.data as Product[], 'providerRefs(byProviderMode)', {
      transaction: trx,
    }).modifiers({
      byProviderMode: (q) => void q.orderBy(['provider', 'mode']),
    });
    return { ...page, data: products.map((p) => serializeProduct(p, p.providerRefs ?? [])) };
  });

const PAGES = [
  { page: 'entitlements', knex: viaKnex, model: viaModel },
  { page: 'products', knex: productsViaKnex, model: productsViaModel },
  { page: 'coupons', knex: couponsViaKnex, model: couponsViaModel },
  { page: 'subscribers', knex: subscribersViaKnex, model: subscribersViaModel },
].filter((p) => !process.env.BENCH_PAGE || p.page === process.env.BENCH_PAGE);

async function run(call: (t: string) => Promise<unknown>): Promise<{ rps: number; p50: number }> {
  const lat: number[] = [];
  const end = Date.now() + SECONDS * 1000;
  let i = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (Date.now() < end) {
        const t0 = performance.now();
        await call(tenantAt(i++));
        lat.push(performance.now() - t0);
      }
    }),
  );
  lat.sort((a, b) => a - b);
  return { rps: lat.length / SECONDS, p50: lat[Math.floor(lat.length / 2)] };
}

try {
  for (const { page, knex: viaKnex, model: viaModel } of PAGES) {
    // Sanity: both paths answer the same page.
    const [a, b] = [await viaKnex(tenantAt(0)), await viaModel(tenantAt(0))];
    if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error(`knex and model ${page} pages differ`);
    // Both paths make the same number of statements (a fair comparison): counted once each.
    const statements = async (call: (t: string) => Promise<unknown>) => {
      let n = 0;
      const count = () => n++;
      db.on('query', count);
      await call(tenantAt(0));
      db.off('query', count);
      return n;
    };
    const [knexStatements, modelStatements] = [await statements(viaKnex), await statements(viaModel)];
    await run(viaKnex);
    await run(viaModel); // warm-up
    const res = { knex: [] as { rps: number; p50: number }[], model: [] as { rps: number; p50: number }[] };
    for (let r = 0; r < ROUNDS; r++) {
      const order = r % 2 === 0 ? (['knex', 'model'] as const) : (['model', 'knex'] as const);
      for (const k of order) res[k].push(await run(k === 'knex' ? viaKnex : viaModel));
    }
    const med = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
    const kr = med(res.knex.map((x) => x.rps));
    const mr = med(res.model.map((x) => x.rps));
    console.log(
      JSON.stringify({
        page,
        statements: { knex: knexStatements, model: modelStatements },
        date: new Date().toISOString(),
        loadavg: os.loadavg()[0].toFixed(1),
        cpus: os.cpus().length,
        tenants: TENANTS,
        rounds: ROUNDS,
        seconds: SECONDS,
        concurrency: CONCURRENCY,
        knex_rps: Math.round(kr),
        model_rps: Math.round(mr),
        model_cost_pct: Math.round((kr / mr - 1) * 1000) / 10,
        knex_p50_ms: med(res.knex.map((x) => x.p50)).toFixed(2),
        model_p50_ms: med(res.model.map((x) => x.p50)).toFixed(2),
      }),
    );
  }
} finally {
  await db.destroy();
  await bench.drop();
}
