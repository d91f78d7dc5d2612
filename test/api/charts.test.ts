import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SCOPES, type Scope } from '../../domain/scopes';
import { CHARTS } from '../../domain/charts/chart-list';
import { testDb } from '../helpers/db';
import { call, keyWith, newTenant, refill, startApi } from '../helpers/api';
import { seedSubscription } from '../helpers/chart-seed';

/**
 * GET /v1/charts and /v1/charts/{name} over seeded histories: the figures, the filters, the
 * mode, CSV, the scope, another tenant's rows, and bad input.
 */
describe('charts over REST', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let a: Awaited<ReturnType<typeof newTenant>>;
  let b: Awaited<ReturnType<typeof newTenant>>;
  let key: string;

  async function product(tenantId: string, sku: string, currency: string, amount: number) {
    const [p] = await testDb()('products').insert({ tenant_id: tenantId, sku, tier: 'monthly' }).returning('id');
    await testDb()('prices').insert({
      tenant_id: tenantId,
      product_id: p.id,
      country: 'DE',
      currency,
      amount_minor: amount,
    });
    return p.id as string;
  }

  beforeAll(async () => {
    api = await startApi({}, process.env.CHART_DEBUG ? process.stderr : undefined);
    a = await newTenant('charts-a');
    b = await newTenant('charts-b');
    key = (await keyWith(a.tenant_id, ['charts:read'])).secret_key;
    const basic = await product(a.tenant_id, 'basic', 'EUR', 1000);
    const pro = await product(a.tenant_id, 'pro', 'EUR', 2000);
    // March: one new; April: another new (trial converted across the month boundary); May: that one upgrades.
    await seedSubscription(a.tenant_id, { moves: [['2026-03-10T10:00:00Z', 'active']] }, basic);
    await seedSubscription(
      a.tenant_id,
      {
        provider: 'store_ios',
        country: 'DE',
        moves: [
          ['2026-03-28T10:00:00Z', 'trialing'],
          ['2026-04-04T10:00:00Z', 'active'],
          ['2026-05-15T10:00:00Z', 'active', pro],
        ],
      },
      basic,
    );
    // Test mode: never in a live chart.
    await seedSubscription(a.tenant_id, { mode: 'test', moves: [['2026-03-12T10:00:00Z', 'active']] }, pro);
    // Another tenant, in USD, same months.
    const other = await product(b.tenant_id, 'basic', 'USD', 700);
    await seedSubscription(b.tenant_id, { moves: [['2026-03-11T10:00:00Z', 'active']] }, other);
  });
  afterAll(async () => {
    await api.close();
  });

  const get = (path: string, k = key) => call(api.apiUrl, path, k);

  it('the tool billing_chart answers the same chart (an assistant asking for MRR of a quarter)', async () => {
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${api.toolsUrl}/`), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
      }),
    );
    try {
      const r = await client.callTool({
        name: 'billing_chart',
        arguments: { name: 'mrr', from: '2026-04-01', to: '2026-06-30', format: 'csv' },
      });
      expect(r.isError).toBeFalsy();
      const rest = await get('/charts/mrr?from=2026-04-01&to=2026-06-30');
      // The same chart; `as_of` is each answer's own read time.
      const withoutAsOf = (b: unknown) => ({ ...(b as object), as_of: undefined });
      expect(withoutAsOf(r.structuredContent)).toEqual(withoutAsOf(rest.body));
      expect(Date.parse((r.structuredContent as { as_of: string }).as_of)).toBeGreaterThan(0);
      // In one currency: the tenant has no EUR rate, so EUR stays apart, named.
      const inUsd = await client.callTool({
        name: 'billing_chart',
        arguments: { name: 'mrr', from: '2026-04-01', to: '2026-06-30', currency: 'USD' },
      });
      expect(inUsd.isError).toBeFalsy();
      expect(inUsd.structuredContent).toMatchObject({ currency: 'USD', unconverted: ['EUR'] });
      const bad = await client.callTool({ name: 'billing_chart', arguments: { name: 'mrr', resolution: 'year' } });
      expect(bad.isError).toBe(true);
    } finally {
      await client.close();
    }
  });

  it('lists every chart with its title and description', async () => {
    const r = await get('/charts');
    expect(r.status).toBe(200);
    expect(r.body.data.map((c: { name: string }) => c.name)).toEqual(CHARTS.map((c) => c.name));
    for (const c of r.body.data) expect(c.title.length * c.description.length).toBeGreaterThan(0);
  });

  it('MRR per month, the upgrade as expansion, and the tenant’s own currency only', async () => {
    const r = await get('/charts/mrr?from=2026-03-01&to=2026-06-30');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      name: 'mrr',
      resolution: 'month',
      mode: 'live',
      from: '2026-03-01',
      to: '2026-06-30',
    });
    expect(r.body.periods).toEqual(['2026-03-01', '2026-04-01', '2026-05-01', '2026-06-01']);
    expect(r.body.series).toEqual([
      { key: 'EUR', label: 'MRR (EUR)', unit: 'money', currency: 'EUR', values: [1000, 2000, 3000, 3000] },
    ]);
    const moves = await get('/charts/mrr_movement?from=2026-03-01&to=2026-06-30');
    const by = (k: string) => moves.body.series.find((s: { key: string }) => s.key === k).values;
    expect(by('new:EUR')).toEqual([1000, 1000, 0, 0]);
    expect(by('expansion:EUR')).toEqual([0, 0, 1000, 0]);
    const trials = await get('/charts/trial_conversion?from=2026-03-01&to=2026-04-30');
    expect(trials.body.series.map((s: { values: unknown[] }) => s.values)).toEqual([
      [1, 0],
      [1, 0],
      [1, null],
    ]);
  });

  it('filters: mode, provider, product (id or SKU), country', async () => {
    const q = '/charts/active_subscriptions?from=2026-06-01&to=2026-06-30';
    const count = async (extra: string) => {
      const r = await get(q + extra);
      expect(r.status, extra + JSON.stringify(r.body)).toBe(200);
      return r.body.series[0]?.values[0];
    };
    expect(await count('')).toBe(2);
    expect(await count('&mode=test')).toBe(1);
    expect(await count('&provider=store_ios')).toBe(1);
    expect(await count('&product=pro')).toBe(1);
    expect(await count('&country=DE')).toBe(1);
    expect(await count('&country=US')).toBe(0);
    const byCountry = await get('/charts/revenue_by_country?from=2026-04-01&to=2026-04-30');
    expect(byCountry.body.series.map((s: { key: string }) => s.key)).toEqual(['DE:EUR', 'unknown:EUR']);
  });

  it('the other tenant sees only its own rows', async () => {
    const other = (await keyWith(b.tenant_id, ['charts:read'])).secret_key;
    const r = await get('/charts/mrr?from=2026-06-01&to=2026-06-30', other);
    expect(r.body.series).toEqual([{ key: 'USD', label: 'MRR (USD)', unit: 'money', currency: 'USD', values: [700] }]);
  });

  it('format=csv: the same chart as a CSV download', async () => {
    // Plain fetch: the OpenAPI check of `call` reads JSON answers.
    const csv = (path: string) => fetch(api.apiUrl + path, { headers: { authorization: `Bearer ${key}` } });
    const r = await csv('/charts/mrr?from=2026-03-01&to=2026-04-30&format=csv');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(r.headers.get('content-disposition')).toContain('mrr-2026-03-01-2026-04-30.csv');
    expect(await r.text()).toBe('period,MRR (EUR)\r\n2026-03-01,1000\r\n2026-04-01,2000\r\n');
    const cohorts = await csv('/charts/retention?from=2026-03-01&to=2026-04-30&format=csv');
    expect((await cohorts.text()).split('\r\n')[0]).toBe('cohort,size,month 0,month 1');
  });

  it('the scope: charts:read admits, every other scope is refused', async () => {
    const allBut = (await keyWith(a.tenant_id, SCOPES.filter((s) => s !== 'charts:read') as Scope[])).secret_key;
    for (const path of ['/charts', '/charts/mrr', '/charts/nope']) {
      const r = await get(path, allBut);
      expect([path, r.status, r.body.error]).toEqual([path, 403, 'insufficient_scope']);
    }
  });

  it('bad input: an unknown chart is a 404; a bad resolution, date or range a 400 naming the parameter', async () => {
    const unknown = await get('/charts/nope');
    expect([unknown.status, unknown.body.error]).toEqual([404, 'not_found']);
    for (const [query, param] of [
      ['resolution=year', 'resolution'],
      ['from=2026-13-01', 'from'],
      ['from=2026-02-30', 'from'],
      ['to=yesterday', 'to'],
      ['from=2026-05-01&to=2026-04-01', 'from'],
      ['resolution=day&from=2020-01-01&to=2026-01-01', 'from'],
      ['mode=staging', 'mode'],
      ['provider=paypal', 'provider'],
      ['country=germany', 'country'],
      ['format=xlsx', 'format'],
      ['colour=red', 'colour'],
    ]) {
      const r = await get(`/charts/mrr?${query}`);
      expect([query, r.status, r.body.error, r.body.param]).toEqual([query, 400, 'invalid_request', param]);
    }
    await refill(a.tenant_id);
  });

  it('every chart answers for a year by month, week and day', async () => {
    for (const c of CHARTS) {
      for (const resolution of ['month', 'week', 'day']) {
        const r = await get(`/charts/${c.name}?from=2026-01-01&to=2026-06-30&resolution=${resolution}`);
        expect([c.name, resolution, r.status]).toEqual([c.name, resolution, 200]);
      }
      await refill(a.tenant_id);
    }
  });
});
