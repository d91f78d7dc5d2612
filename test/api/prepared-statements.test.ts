import { afterAll, describe, expect, inject, it } from 'vitest';
import { createKnex } from '../../db/knex';
import { productPage } from '../../db/products';
import { withTenant } from '../../db/tenant-tx';
import { upsertEntitlement } from '../../db/entitlements';
import { newTenant } from '../helpers/api';
import { testDb } from '../helpers/db';
import { makeSubscription } from '../helpers/factories';

/**
 * The hot path's statements run prepared (db/knex.ts): one plan per connection, reused by every
 * tenant that connection serves. Row-level security must still filter by the tenant of the
 * transaction running it, not the one that prepared it.
 */
describe('prepared statements', () => {
  // One connection, as the api's login role: every call below reuses the same prepared page.
  const one = createKnex(inject('appDatabaseUrl'), { max: 1 });
  afterAll(async () => one.destroy());

  it('one connection serves two tenants the same prepared page: each sees only its own rows, past the switch to a generic plan', async () => {
    const [a, b] = [await newTenant('prep-a'), await newTenant('prep-b')];
    await testDb()('products').insert([
      { tenant_id: a.tenant_id, sku: 'a-1' },
      { tenant_id: a.tenant_id, sku: 'a-2' },
      { tenant_id: b.tenant_id, sku: 'b-1' },
    ]);
    // Postgres plans a prepared statement afresh for its first five runs, then may keep a
    // generic plan: alternate well past that.
    for (let i = 0; i < 8; i++) {
      for (const [t, skus] of [
        [a, ['a-2', 'a-1']],
        [b, ['b-1']],
      ] as const) {
        const page = await withTenant(one, t.tenant_id, (trx) => productPage(trx, {}, { limit: 50, offset: 0 }));
        expect(page.data.map((r) => r.sku).sort()).toEqual([...skus].sort());
        expect(page.pagination.total).toBe(skus.length);
      }
    }
    const prepared = await one.raw(`select count(*)::int as n from pg_prepared_statements where name like 'p%'`);
    expect(prepared.rows[0].n).toBeGreaterThan(0);
  });

  it('the prepared entitlement write checks the tenant of the transaction running it, past the generic plan', async () => {
    const [a, b] = [await newTenant('prep-write-a'), await newTenant('prep-write-b')];
    // One subscription per tenant for the rows to name.
    const subscriptionOf = new Map<string, string>();
    for (const t of [a, b])
      subscriptionOf.set(t.tenant_id, (await makeSubscription(t.tenant_id, { provider: 'psp_a', mode: 'live' })).id);
    const write = (tenantId: string, asTenant: string, user: string) =>
      withTenant(one, asTenant, (trx) =>
        upsertEntitlement(trx, {
          tenantId,
          appUserId: user,
          provider: 'psp_a',
          productId: null,
          subscriptionId: subscriptionOf.get(tenantId)!,
          state: 'active',
          isSandbox: false,
          expiresAt: null,
          graceUntil: null,
        }),
      );
    for (let i = 0; i < 8; i++) {
      await write(a.tenant_id, a.tenant_id, `a_${i}`);
      await write(b.tenant_id, b.tenant_id, `b_${i}`);
    }
    // Planned and run many times by one connection: a row naming another tenant is still refused by its policy.
    await expect(write(b.tenant_id, a.tenant_id, 'intruder')).rejects.toThrow(/row-level security/);
    const rows = await testDb()('entitlements')
      .whereIn('tenant_id', [a.tenant_id, b.tenant_id])
      .select('tenant_id', 'app_user_id');
    expect(rows.filter((r) => r.tenant_id === a.tenant_id).every((r) => r.app_user_id.startsWith('a_'))).toBe(true);
    expect(rows.filter((r) => r.tenant_id === b.tenant_id).every((r) => r.app_user_id.startsWith('b_'))).toBe(true);
    expect(rows).toHaveLength(16);
    const prepared = await one.raw(
      `select count(*)::int as n from pg_prepared_statements where statement like '%insert into entitlements%'`,
    );
    expect(prepared.rows[0].n).toBe(1);
  });

  it('a table changed under a prepared `select t.*` fails that one query, then the statement is prepared afresh', async () => {
    const db = createKnex(inject('databaseUrl'), { max: 1 });
    try {
      await db.raw('create table prep_probe (id int primary key, label text)');
      await db('prep_probe').insert({ id: 1, label: 'x' });
      const read = () => db('prep_probe').select('prep_probe.*').where('id', 1).options({ prepare: true });
      expect(await read()).toEqual([{ id: 1, label: 'x' }]);
      await db.raw('alter table prep_probe add column extra int');
      await expect(read()).rejects.toThrow(/cached plan must not change result type/);
      expect(await read()).toEqual([{ id: 1, label: 'x', extra: null }]);
    } finally {
      await db.raw('drop table if exists prep_probe');
      await db.destroy();
    }
  });
});
