import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHARTS } from '../../domain/charts/chart-list';
import { OPERATIONS } from '../../operations';
import { seedDemoTenant } from '../../seed/demo';
import { testDb } from '../helpers/db';
import { call, newTenant, startApi } from '../helpers/api';
import { makeEntitlement } from '../helpers/factories';

/** Tenant B's key never sees tenant A's rows, on any list or get, on either host. */
describe('cross-tenant isolation through the API', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let a: Awaited<ReturnType<typeof newTenant>>;
  let b: Awaited<ReturnType<typeof newTenant>>;
  let aIds: Set<string>;
  // App users only A has (the demo seed gives both tenants the same ones): the customer page must not find them for B.
  const aOnlyUsers = ['a-only-user-1', 'a-only-user-2'];
  beforeAll(async () => {
    api = await startApi();
    a = await newTenant('A');
    b = await newTenant('B');
    await seedDemoTenant(testDb(), a.tenant_id);
    await seedDemoTenant(testDb(), b.tenant_id);
    for (const appUserId of aOnlyUsers) await makeEntitlement(a.tenant_id, { appUserId });
    // Every id of every row tenant A owns, across all tenant tables.
    aIds = new Set<string>();
    const tables = await testDb()('information_schema.columns')
      .where({ column_name: 'tenant_id', table_schema: 'public' })
      .pluck('table_name');
    for (const table of tables) {
      const cols = await testDb()('information_schema.columns').where({ table_name: table, column_name: 'id' }).first();
      if (!cols) continue;
      for (const r of await testDb()(table).where({ tenant_id: a.tenant_id }).select('id')) aIds.add(r.id);
    }
    aIds.add(a.tenant_id);
  });
  afterAll(async () => api.close());

  const yesterday = () => new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);

  it('no list or get answered to B contains any of A’s ids', async () => {
    expect(aIds.size).toBeGreaterThan(20);
    for (const op of OPERATIONS.filter((o) => o.rest?.method === 'GET')) {
      const paths = op.rest!.path.includes('{id}')
        ? [...aIds].slice(0, 40).map((id) => op.rest!.path.replace('{id}', id))
        : op.rest!.path.includes('{app_user_id}')
          ? aOnlyUsers.map((u) => op.rest!.path.replace('{app_user_id}', u))
          : op.rest!.path.includes('{name}')
            ? CHARTS.map((c) => op.rest!.path.replace('{name}', c.name))
            : op.rest!.path.includes('{date}')
              ? [op.rest!.path.replace('{date}', yesterday())]
              : [`${op.rest!.path}${op.input.safeParse({ limit: 200 }).success ? '?limit=200' : ''}`];
      for (const base of [api.apiUrl, api.altUrl]) {
        for (const p of paths) {
          const r = await call(base, p, b.secret_key);
          expect([p, r.status]).toEqual([
            p,
            // A chart's name and a day are not ids: B is answered its own chart and its own day's digest.
            /\{(?!name\}|date\})/.test(op.rest!.path) ? 404 : 200,
          ]);
          const text = JSON.stringify(r.body);
          for (const id of aIds) if (text.includes(id)) throw new Error(`${base}${p} leaked tenant A's id ${id}`);
        }
      }
      await testDb()('rate_limit_buckets').where({ tenant_id: b.tenant_id }).del();
    }
  });

  it('B sees its own rows (the check above is not vacuous)', async () => {
    const r = await call(api.apiUrl, '/subscribers', b.secret_key);
    expect(r.body.data.length).toBeGreaterThan(0);
    const s = await call(api.apiUrl, '/subscribers', a.secret_key);
    const aSubIds = new Set(s.body.data.map((x: any) => x.id));
    expect(r.body.data.some((x: any) => aSubIds.has(x.id))).toBe(false);
    // A's own key finds the customers B's key was refused.
    for (const u of aOnlyUsers) expect((await call(api.apiUrl, `/customers/${u}`, a.secret_key)).status).toBe(200);
  });
});
