import { beforeAll, describe, expect, it } from 'vitest';
import { Coupon, Entitlement, Product, Subscription } from '../../db/models';
import { withTenant } from '../../db/tenant-tx';
import { seedDemoTenant } from '../../seed/demo';
import { newTenant } from '../helpers/api';
import { testDb } from '../helpers/db';

/** The objection models run inside the tenant transaction, under RLS, and their relations fetch the right rows. */
describe('db/models', () => {
  let a: Awaited<ReturnType<typeof newTenant>>;
  let b: Awaited<ReturnType<typeof newTenant>>;
  beforeAll(async () => {
    a = await newTenant('models-a');
    b = await newTenant('models-b');
    await seedDemoTenant(testDb(), a.tenant_id);
  });

  it('refuse a query without the tenant transaction (no bound knex to fall back on)', async () => {
    await expect(Product.query().limit(1)).rejects.toThrow(/no database connection/);
  });

  it("product ↔ prices ↔ provider refs: the graph equals the tables' rows", async () => {
    const [p] = await withTenant(
      testDb(),
      a.tenant_id,
      async (trx) => await Product.query(trx).withGraphFetched('[prices, providerRefs]').limit(1),
    );
    expect(p).toBeDefined();
    const prices = await testDb()('prices').where({ product_id: p.id }).pluck('id');
    expect(prices.length).toBeGreaterThan(0);
    expect(p.prices!.map((x) => x.id).sort()).toEqual([...prices].sort());
    const refs = await testDb()('product_provider_refs').where({ product_id: p.id }).count<{ n: number }[]>('* as n');
    expect(p.providerRefs).toHaveLength(Number(refs[0].n));
  });

  it('subscription ↔ entitlements and coupon ↔ counterparts fetch as graphs', async () => {
    const subs = await withTenant(
      testDb(),
      a.tenant_id,
      async (trx) => await Subscription.query(trx).withGraphFetched('entitlements'),
    );
    expect(subs.length).toBeGreaterThan(0);
    const linked = await testDb()('entitlements')
      .where({ tenant_id: a.tenant_id })
      .whereNotNull('subscription_id')
      .count<{ n: number }[]>('* as n');
    expect(subs.flatMap((s) => s.entitlements ?? [])).toHaveLength(Number(linked[0].n));
    const ents = await withTenant(
      testDb(),
      a.tenant_id,
      async (trx) => await Entitlement.query(trx).withGraphFetched('subscription'),
    );
    for (const e of ents) expect(e.subscription?.id ?? null).toBe(e.subscription_id);
    const coupons = await withTenant(
      testDb(),
      a.tenant_id,
      async (trx) => await Coupon.query(trx).withGraphFetched('counterparts'),
    );
    const cps = await testDb()('coupon_counterparts')
      .where({ tenant_id: a.tenant_id })
      .count<{ n: number }[]>('* as n');
    expect(coupons.flatMap((c) => c.counterparts ?? [])).toHaveLength(Number(cps[0].n));
  });

  it("RLS holds through the models: another tenant's transaction sees none of these rows, by list, id or relation", async () => {
    const mine = await withTenant(testDb(), a.tenant_id, async (trx) => await Product.query(trx));
    expect(mine.length).toBeGreaterThan(0);
    const theirs = await withTenant(testDb(), b.tenant_id, async (trx) => ({
      list: await Product.query(trx),
      byId: await Product.query(trx).findById(mine[0].id),
      subs: await Subscription.query(trx).withGraphFetched('entitlements'),
    }));
    expect(theirs).toEqual({ list: [], byId: undefined, subs: [] });
  });
});
