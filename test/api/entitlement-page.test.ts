import { afterAll, describe, expect, inject, it } from 'vitest';
import { entitlementPage } from '../../db/entitlements';
import { createKnex } from '../../db/knex';
import { rows } from '../../db/paging';
import { paginate, whereGiven } from '../../bench/lib/builder-page';
import { withTenant } from '../../db/tenant-tx';
import { readAsTenant } from '../../db/tenant-read';
import { makeProduct, makeTenant } from '../helpers/factories';
import { testDb } from '../helpers/db';
import { serializeEntitlement } from '../../operations/entitlements/schema';

/**
 * Every list reads its page as written SQL (db/paging.ts pageFromSql) instead of through the
 * knex builder (kept in bench/lib/builder-page.ts); GET /entitlements is checked here: it must answer exactly what paginate() answers for the same filters and
 * page, totals and offsets past the end included, and only the tenant's own rows. Its time
 * columns arrive as ISO strings (db/timestamps.ts), so rows are compared as the API writes them.
 */
describe('entitlement page as written SQL', () => {
  const app = createKnex(inject('appDatabaseUrl'), { max: 2 });
  afterAll(async () => app.destroy());

  it('same rows, order, total and has_more as paginate() for every filter combination and page; another tenant sees none of them', async () => {
    const [t, other] = [await makeTenant('ent-page'), await makeTenant('ent-page-other')];
    const product = await makeProduct(t.tenant_id, { sku: 'gold' });
    const base = Date.parse('2026-01-01T00:00:00Z');
    const seed = [];
    for (let i = 0; i < 23; i++) {
      seed.push({
        tenant_id: t.tenant_id,
        app_user_id: `user_${i % 4}${i >= 12 ? 'x' : ''}`, // (user, provider, product) is unique
        provider: ['store_ios', 'psp_a', 'psp_b'][i % 3],
        product_id: i % 2 ? product.id : null,
        state: i % 5 ? 'active' : 'grace_period',
        // Pairs share a created_at: the id breaks the tie, in both versions.
        created_at: new Date(base + Math.floor(i / 2) * 1000),
        // Sub-millisecond digits: the ISO form cuts them, as a Date does.
        expires_at: i % 3 ? `2026-02-0${1 + (i % 9)} 10:00:00.${String(123456 + i * 7).padStart(6, '0')}+00` : null,
      });
    }
    await testDb()('entitlements').insert(seed);
    await testDb()('entitlements').insert({
      tenant_id: other.tenant_id,
      app_user_id: 'user_0',
      provider: 'psp_a',
      state: 'active',
    });

    const viaBuilder = (filters: Record<string, string | undefined>, page: { limit: number; offset: number }) =>
      withTenant(app, t.tenant_id, (trx) =>
        paginate(
          whereGiven(
            trx('entitlements').leftJoin('products', 'products.id', 'entitlements.product_id'),
            'entitlements',
            filters,
          ),
          { ...page, table: 'entitlements', columns: ['entitlements.*', 'products.sku'] },
          rows,
        ),
      );
    const strip = (p: Awaited<ReturnType<typeof viaBuilder>>) => ({
      ...p,
      data: p.data.map((r) => serializeEntitlement(r)),
    });
    const filterSets = [
      {},
      { app_user_id: 'user_1' },
      { provider: 'store_ios' },
      { state: 'grace_period' },
      { app_user_id: 'user_2', provider: 'psp_a', state: 'active' },
      { app_user_id: 'nobody' },
    ];
    const pages = [
      { limit: 5, offset: 0 },
      { limit: 5, offset: 5 },
      { limit: 50, offset: 0 },
      { limit: 7, offset: 21 },
      { limit: 10, offset: 40 }, // past the end: no rows, the true total
    ];
    let compared = 0;
    for (const filters of filterSets) {
      for (const page of pages) {
        const mine = await readAsTenant(app, t.tenant_id, (reader) => entitlementPage(reader, filters, page));
        expect(strip(mine)).toEqual(strip(await viaBuilder(filters, page)));
        // The same function in a knex tenant transaction (readerOf) answers the same.
        expect(await withTenant(app, t.tenant_id, (trx) => entitlementPage(trx, filters, page))).toEqual(mine);
        compared += mine.data.length;
      }
    }
    expect(compared).toBeGreaterThan(40);
    const all = await readAsTenant(app, t.tenant_id, (reader) => entitlementPage(reader, {}, { limit: 50, offset: 0 }));
    expect(all.pagination).toEqual({ limit: 50, offset: 0, total: 23, has_more: false });
    expect(all.data.filter((r) => r.sku === 'gold').length).toBe(11);
    const past = await readAsTenant(app, t.tenant_id, (reader) =>
      entitlementPage(reader, {}, { limit: 10, offset: 40 }),
    );
    expect(past).toEqual({ data: [], pagination: { limit: 10, offset: 40, total: 23, has_more: false } });
    // The other tenant's transaction, on the same connections and prepared statements, sees its one row.
    const theirs = await readAsTenant(app, other.tenant_id, (reader) =>
      entitlementPage(reader, { app_user_id: 'user_0' }, { limit: 50, offset: 0 }),
    );
    expect(theirs.data.map((r) => r.tenant_id)).toEqual([other.tenant_id]);
  });
});
