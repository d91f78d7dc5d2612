import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES, type Scope } from '../../domain/scopes';
import { foldChartSums } from '../../db/chart-fold';
import { appDb, testDb } from '../helpers/db';
import { call, keyWith, newTenant, refill, startApi } from '../helpers/api';
import { seedSubscription } from '../helpers/chart-seed';

/**
 * Exchange rates (docs/charts.md, "Currencies"): set, listed and removed over REST with their
 * own scope; a chart asked `currency=USD` converts each period at the rate in force on its last
 * day, and a currency without a rate for some period stays apart, named in `unconverted`. Bad
 * input answers 400 naming the parameter; another tenant's rates are neither seen nor used.
 */
describe('exchange rates and charts in one currency', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let a: Awaited<ReturnType<typeof newTenant>>;
  let b: Awaited<ReturnType<typeof newTenant>>;
  let reader: string;
  let writer: string;

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
    api = await startApi();
    a = await newTenant('rates-a');
    b = await newTenant('rates-b');
    reader = (await keyWith(a.tenant_id, ['charts:read'])).secret_key;
    writer = (await keyWith(a.tenant_id, ['charts:write'])).secret_key;
    const eur = await product(a.tenant_id, 'eur', 'EUR', 1000);
    const jpy = await product(a.tenant_id, 'jpy', 'JPY', 1200);
    const usd = await product(a.tenant_id, 'usd', 'USD', 500);
    await seedSubscription(a.tenant_id, { moves: [['2026-03-10T10:00:00Z', 'active']] }, eur);
    await seedSubscription(a.tenant_id, { moves: [['2026-03-12T10:00:00Z', 'active']] }, jpy);
    await seedSubscription(a.tenant_id, { moves: [['2026-03-14T10:00:00Z', 'active']] }, usd);
    // The charts read the sums the fold job keeps.
    await foldChartSums(appDb(), a.tenant_id);
  });
  afterAll(async () => {
    await api.close();
  });

  const set = (rates: unknown, key = writer) =>
    call(api.apiUrl, '/exchange-rates', key, { method: 'POST', body: JSON.stringify({ rates }) });
  const mrr = (query: string, key = reader) =>
    call(api.apiUrl, `/charts/mrr?from=2026-03-01&to=2026-06-30&${query}`, key);

  it('sets, lists and replaces rates; a pair and day set again is replaced', async () => {
    const r = await set([
      { from: 'EUR', to: 'USD', rate: 1.1, valid_from: '2026-01-01' },
      { from: 'EUR', to: 'USD', rate: 1.3, valid_from: '2026-05-01' },
    ]);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.data.map((x: { rate: number }) => x.rate)).toEqual([1.1, 1.3]);
    const again = await set([{ from: 'EUR', to: 'USD', rate: 1.2, valid_from: '2026-05-01' }]);
    expect(again.status).toBe(200);
    const list = await call(api.apiUrl, '/exchange-rates?to=USD', reader);
    expect(list.status).toBe(200);
    expect(
      list.body.data.map((x: { from: string; rate: number; valid_from: string }) => [x.from, x.rate, x.valid_from]),
    ).toEqual([
      ['EUR', 1.1, '2026-01-01'],
      ['EUR', 1.2, '2026-05-01'],
    ]);
  });

  it('currency=USD: each period at its own rate; JPY without a rate stays apart and is named', async () => {
    const r = await mrr('currency=USD');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.currency).toBe('USD');
    expect(r.body.unconverted).toEqual(['JPY']);
    expect(r.body.series).toEqual([
      { key: 'JPY', label: 'MRR (JPY)', unit: 'money', currency: 'JPY', values: [1200, 1200, 1200, 1200] },
      // 1000 EUR cents at 1.1 (March, April) and 1.2 (from May), plus 500 USD cents.
      { key: 'USD', label: 'MRR (USD)', unit: 'money', currency: 'USD', values: [1600, 1600, 1700, 1700] },
    ]);
    // Without currency: each currency apart, as always.
    const plain = await mrr('');
    expect(plain.body.currency).toBeNull();
    expect(plain.body.unconverted).toBeUndefined();
    expect(plain.body.series.map((s: { key: string }) => s.key)).toEqual(['EUR', 'JPY', 'USD']);
  });

  it('a rate from yen (no decimals) into dollars (two) scales the minor units', async () => {
    expect((await set([{ from: 'JPY', to: 'USD', rate: 0.0067, valid_from: '2026-01-01' }])).status).toBe(200);
    const r = await mrr('currency=USD');
    expect(r.body.unconverted).toEqual([]);
    // 1200 JPY = 8.04 USD = 804 cents.
    expect(r.body.series).toEqual([
      { key: 'USD', label: 'MRR (USD)', unit: 'money', currency: 'USD', values: [2404, 2404, 2504, 2504] },
    ]);
  });

  it('a period without a rate leaves that currency unconverted for the whole chart, never half converted', async () => {
    const del = await call(api.apiUrl, '/exchange-rates/EUR/USD/2026-01-01', writer, { method: 'DELETE' });
    expect([del.status, del.body]).toEqual([200, { removed: true }]);
    const gone = await call(api.apiUrl, '/exchange-rates/EUR/USD/2026-01-01', writer, { method: 'DELETE' });
    expect([gone.status, gone.body.error]).toEqual([404, 'not_found']);
    // EUR→USD now only from May: March and April have no rate.
    const r = await mrr('currency=USD');
    expect(r.body.unconverted).toEqual(['EUR']);
    expect(r.body.series.map((s: { key: string; values: number[] }) => [s.key, s.values])).toEqual([
      ['EUR', [1000, 1000, 1000, 1000]],
      ['USD', [1304, 1304, 1304, 1304]],
    ]);
    // From May on, every period has one.
    const may = await call(api.apiUrl, '/charts/mrr?from=2026-05-01&to=2026-06-30&currency=USD', reader);
    expect(may.body.unconverted).toEqual([]);
    expect(may.body.series.map((s: { key: string; values: number[] }) => [s.key, s.values])).toEqual([
      ['USD', [2504, 2504]],
    ]);
    // Ratios convert before dividing: revenue churn over MRR in one currency.
    const churn = await call(api.apiUrl, '/charts/churn_rate?from=2026-05-01&to=2026-06-30&currency=USD', reader);
    expect(churn.body.series.map((s: { key: string }) => s.key)).toEqual(['subscriptions', 'revenue:USD']);
    await refill(a.tenant_id);
  });

  it('bad input: 400 invalid_request naming the parameter, nothing written', async () => {
    const before = await testDb()('exchange_rates').where({ tenant_id: a.tenant_id }).count('* as n');
    for (const [rates, param] of [
      [[{ from: 'eur', to: 'USD', rate: 1, valid_from: '2026-01-01' }], 'rates.0.from'],
      [[{ from: 'EUR', to: 'USD', rate: 0, valid_from: '2026-01-01' }], 'rates.0.rate'],
      [[{ from: 'EUR', to: 'USD', rate: -2, valid_from: '2026-01-01' }], 'rates.0.rate'],
      [[{ from: 'EUR', to: 'USD', rate: 1, valid_from: '2026-02-30' }], 'rates.0.valid_from'],
      [[{ from: 'EUR', to: 'EUR', rate: 1, valid_from: '2026-01-01' }], 'rates.0.to'],
      [[{ from: 'EUR', to: 'USD', valid_from: '2026-01-01' }], 'rates.0.rate'],
      [
        [
          { from: 'GBP', to: 'USD', rate: 1.3, valid_from: '2026-01-01' },
          { from: 'GBP', to: 'USD', rate: 1.4, valid_from: '2026-01-01' },
        ],
        'rates.1',
      ],
      [[], 'rates'],
    ] as const) {
      const r = await set(rates);
      expect([JSON.stringify(rates), r.status, r.body.error, r.body.param]).toEqual([
        JSON.stringify(rates),
        400,
        'invalid_request',
        param,
      ]);
    }
    const after = await testDb()('exchange_rates').where({ tenant_id: a.tenant_id }).count('* as n');
    expect(after).toEqual(before);
    for (const [query, param] of [
      ['currency=usd', 'currency'],
      ['currency=DOLLAR', 'currency'],
    ]) {
      const r = await mrr(query);
      expect([query, r.status, r.body.param]).toEqual([query, 400, param]);
    }
    const list = await call(api.apiUrl, '/exchange-rates?from=euro', reader);
    expect([list.status, list.body.param]).toEqual([400, 'from']);
    for (const [path, param] of [
      ['/exchange-rates/8cf3246d-4032-48c2-a6d7-81e4f7ba7a79/fuzz_user/fuzz_user', 'from'],
      ['/exchange-rates/EUR/usd/2026-01-01', 'to'],
      ['/exchange-rates/EUR/USD/2026-02-30', 'valid_from'],
    ]) {
      const r = await call(api.apiUrl, path, writer, { method: 'DELETE' });
      expect([path, r.status, r.body.param]).toEqual([path, 400, param]);
    }
    await refill(a.tenant_id);
  });

  it('scopes: charts:read lists, charts:write sets and removes; every other scope is refused', async () => {
    const allButRead = (await keyWith(a.tenant_id, SCOPES.filter((s) => s !== 'charts:read') as Scope[])).secret_key;
    const allButWrite = (await keyWith(a.tenant_id, SCOPES.filter((s) => s !== 'charts:write') as Scope[])).secret_key;
    expect((await call(api.apiUrl, '/exchange-rates', allButRead)).status).toBe(403);
    expect((await call(api.apiUrl, '/exchange-rates', writer)).status).toBe(403);
    expect((await set([{ from: 'GBP', to: 'USD', rate: 1.3, valid_from: '2026-01-01' }], allButWrite)).status).toBe(
      403,
    );
    expect((await set([{ from: 'GBP', to: 'USD', rate: 1.3, valid_from: '2026-01-01' }], reader)).status).toBe(403);
    const del = await call(api.apiUrl, '/exchange-rates/EUR/USD/2026-05-01', allButWrite, { method: 'DELETE' });
    expect(del.status).toBe(403);
    // The write is audited under the operation's name.
    const audited = await testDb()('audit_entries')
      .where({ tenant_id: a.tenant_id, action: 'exchange_rates.set' })
      .first();
    expect(audited).toBeTruthy();
    await refill(a.tenant_id);
  });

  it("another tenant neither sees nor uses this tenant's rates", async () => {
    const other = (await keyWith(b.tenant_id, ['charts:read'])).secret_key;
    const list = await call(api.apiUrl, '/exchange-rates', other);
    expect(list.body.data).toEqual([]);
    const eur = await product(b.tenant_id, 'eur', 'EUR', 700);
    await seedSubscription(b.tenant_id, { moves: [['2026-03-11T10:00:00Z', 'active']] }, eur);
    const r = await mrr('currency=USD', other);
    expect(r.body.unconverted).toEqual(['EUR']);
    expect(r.body.series).toEqual([
      { key: 'EUR', label: 'MRR (EUR)', unit: 'money', currency: 'EUR', values: [700, 700, 700, 700] },
    ]);
    // B's write cannot touch A's rates.
    const bWriter = (await keyWith(b.tenant_id, ['charts:write'])).secret_key;
    const del = await call(api.apiUrl, '/exchange-rates/EUR/USD/2026-05-01', bWriter, { method: 'DELETE' });
    expect(del.status).toBe(404);
    expect(await testDb()('exchange_rates').where({ tenant_id: a.tenant_id, from_currency: 'EUR' })).toHaveLength(1);
  });
});
