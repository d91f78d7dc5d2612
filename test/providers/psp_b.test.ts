import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../emulators/common/host';
import { createEmulator } from '../../emulators/psp_b/emulator';
import { ProviderRateLimitedError, ProviderRejectedError, ProviderUnreachableError } from '../../providers/errors';
import { createPspBAdapter } from '../../providers/psp_b/adapter';
import type { ProductSpec, ProviderContext } from '../../providers/types';
import { controlFor } from '../helpers/emulator-control';
import { productSpec } from '../helpers/product-spec';

// The psp_b adapter against the real Paddle emulator over HTTP: every catalogue method,
// idempotent retries, test/live isolation, and each fault class.

interface Account {
  account: string;
  credentials: { test: { api_key: string }; live: { api_key: string } };
  webhook_secret: string;
}

let emu: RunningEmulator;
let acct: Account;
let test: ProviderContext;
let live: ProviderContext;
const adapter = createPspBAdapter();

const control = controlFor(() => emu.url, { strict: true });

type Obj = Record<string, unknown> & { id: string };
const state = async () => control<Record<string, Obj[]>>('GET', '/state');
const mine = (objs: Obj[] | undefined, pred: (o: Obj) => boolean = () => true) =>
  (objs ?? []).filter((o) => o._account === acct.account && pred(o));

const spec = (over: Partial<ProductSpec> = {}) =>
  productSpec({
    tenant_id: 'ten_1',
    sku: `sku_${crypto.randomBytes(4).toString('hex')}`,
    name: 'Pro monthly',
    trial_days: 7,
    prices: [
      { country: 'US', currency: 'USD', amount_minor: 999 },
      { country: 'GB', currency: 'GBP', amount_minor: 799 },
      { country: 'DE', currency: 'EUR', amount_minor: 899 },
      { country: 'FR', currency: 'EUR', amount_minor: 899 },
      { country: 'CA', currency: 'CAD', amount_minor: 1299 },
    ],
    ...over,
  });

async function paddle(ctx: ProviderContext, path: string, init: RequestInit = {}) {
  const res = await fetch(`${emu.url}${path}`, {
    ...init,
    headers: {
      Authorization: `Bearer ${ctx.credential.api_key}`,
      'Content-Type': 'application/json',
      ...(init.headers ?? {}),
    },
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}

beforeAll(async () => {
  emu = await startEmulator(createEmulator, { port: 0 });
  acct = await control<Account>('POST', '/accounts', {});
  test = {
    baseUrl: emu.url,
    mode: 'test',
    credential: { api_key: acct.credentials.test.api_key },
    accountRef: acct.account,
  };
  live = {
    baseUrl: emu.url,
    mode: 'live',
    credential: { api_key: acct.credentials.live.api_key },
    accountRef: acct.account,
  };
});
afterAll(async () => {
  await emu?.close();
});
afterEach(async () => {
  await control('DELETE', '/faults');
});

describe('psp_b emulator: accounts and Paddle wire protocol', () => {
  it('creates an account with distinct sandbox and live keys, and returns it again by id', async () => {
    expect(acct.credentials.test.api_key).toMatch(/^pdl_sdbx_apikey_/);
    expect(acct.credentials.live.api_key).toMatch(/^pdl_live_apikey_/);
    expect(acct.webhook_secret).toMatch(/^pdl_ntfset_/);
    const again = await control<Account>('POST', '/accounts', { account: acct.account });
    expect(again).toEqual(acct);
    const named = await control<Account>('POST', '/accounts', { account: 'seller_named' });
    expect(named.account).toBe('seller_named');
    expect((await state()).accounts.map((a) => a.account)).toContain('seller_named');
  });

  it('answers auth failures with Paddle 403 error shapes', async () => {
    const missing = await fetch(`${emu.url}/products`);
    expect(missing.status).toBe(403);
    const body = await missing.json();
    expect(body.error).toMatchObject({ type: 'request_error', code: 'authentication_missing' });
    expect(body.error.documentation_url).toBe('https://developer.paddle.com/errors/shared/authentication_missing');
    expect(body.meta.request_id).toMatch(/^[0-9a-f-]{36}$/);
    const malformed = await fetch(`${emu.url}/products`, { headers: { Authorization: 'Basic abc' } });
    expect((await malformed.json()).error.code).toBe('authentication_malformed');
    const wrong = await fetch(`${emu.url}/products`, { headers: { Authorization: 'Bearer pdl_sdbx_apikey_nope' } });
    expect((await wrong.json()).error.code).toBe('invalid_token');
  });

  it('lists event types for a valid key', async () => {
    const res = await paddle(test, '/event-types');
    expect(res.status).toBe(200);
    expect(res.body.data.map((t: { name: string }) => t.name)).toEqual(
      expect.arrayContaining(['transaction.completed', 'subscription.created']),
    );
  });

  it('pages lists with Paddle cursor pagination', async () => {
    const ctx = { ...test };
    const a = await control<Account>('POST', '/accounts', { account: 'seller_paging' });
    ctx.credential = { api_key: a.credentials.test.api_key };
    for (let i = 0; i < 3; i++) {
      await paddle(ctx, '/products', {
        method: 'POST',
        body: JSON.stringify({ name: `P${i}`, tax_category: 'standard' }),
      });
    }
    const first = await paddle(ctx, '/products?per_page=2');
    expect(first.body.data).toHaveLength(2);
    expect(first.body.meta.pagination).toMatchObject({ per_page: 2, has_more: true, estimated_total: 3 });
    const next = new URL(first.body.meta.pagination.next);
    expect(next.searchParams.get('after')).toBe(first.body.data[1].id);
    const second = await paddle(ctx, `/products${next.search}`);
    expect(second.body.data).toHaveLength(1);
    expect(second.body.meta.pagination.has_more).toBe(false);
    expect(second.body.data[0]).not.toHaveProperty('_account');
  });

  it('rejects invalid bodies with 400 invalid_field listing the fields', async () => {
    const res = await paddle(test, '/products', { method: 'POST', body: JSON.stringify({ name: '', colour: 'red' }) });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_field');
    const fields = res.body.error.errors.map((e: { field: string }) => e.field);
    expect(fields).toEqual(expect.arrayContaining(['name', 'tax_category', 'colour']));
    const notJson = await paddle(test, '/products', { method: 'POST', body: '{nope' });
    expect(notJson.status).toBe(400);
    expect(notJson.body.error.code).toBe('bad_request');
    const missing = await paddle(test, '/products/pro_01h0000000000000000000000');
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({
      code: 'not_found',
      detail: 'Entity pro_01h0000000000000000000000 not found',
    });
  });
});

describe('psp_b adapter: catalogue', () => {
  it('checkReachable passes with each key and rejects a bad or mismatched one', async () => {
    await adapter.checkReachable(test);
    await adapter.checkReachable(live);
    const bad = await rejection(
      adapter.checkReachable({ ...test, credential: { api_key: 'pdl_sdbx_apikey_revoked' } }),
    );
    expect(bad).toBeInstanceOf(ProviderRejectedError);
    expect((bad as ProviderRejectedError).status).toBe(403);
    expect((bad as ProviderRejectedError).opts.code).toBe('invalid_token');
    expect(bad.message).not.toContain('pdl_sdbx_apikey_revoked');
    const mismatch = await rejection(adapter.checkReachable({ ...live, credential: test.credential }));
    expect(mismatch).toBeInstanceOf(ProviderRejectedError);
    expect((mismatch as ProviderRejectedError).opts.code).toBe('credential_mode_mismatch');
  });

  it('upsertProduct creates once, finds it again by custom_data and updates changed fields', async () => {
    const s = spec();
    const first = await adapter.upsertProduct(test, s, `k-${s.product_id}-1`);
    expect(first.external_id).toMatch(/^pro_[0-9a-z]{26}$/);
    const retried = await adapter.upsertProduct(test, s, `k-${s.product_id}-1`);
    expect(retried.external_id).toBe(first.external_id);
    const renamed = await adapter.upsertProduct(
      test,
      { ...s, name: 'Pro (renamed)', version: 2 },
      `k-${s.product_id}-2`,
    );
    expect(renamed.external_id).toBe(first.external_id);
    const products = mine(
      (await state()).products,
      (p) => (p.custom_data as { product_id?: string })?.product_id === s.product_id,
    );
    expect(products).toHaveLength(1);
    expect(products[0]).toMatchObject({
      name: 'Pro (renamed)',
      tax_category: 'standard',
      status: 'active',
      _mode: 'test',
      custom_data: { product_id: s.product_id, sku: s.sku, tenant_id: 'ten_1' },
    });
  });

  it('a retry after a lost response leaves exactly one remote product', async () => {
    const s = spec();
    // The request reaches Paddle and is applied, then the answer is lost on the way back.
    const lossy = createPspBAdapter({
      fetch: async (input, init) => {
        const res = await fetch(input, init);
        if (init?.method === 'POST') {
          await res.arrayBuffer();
          throw new TypeError('fetch failed', { cause: { code: 'ECONNRESET' } });
        }
        return res;
      },
    });
    const lost = await rejection(lossy.upsertProduct(test, s, 'k'));
    expect(lost).toBeInstanceOf(ProviderUnreachableError);
    const retried = await adapter.upsertProduct(test, s, 'k');
    const products = mine(
      (await state()).products,
      (p) => (p.custom_data as { product_id?: string })?.product_id === s.product_id,
    );
    expect(products.map((p) => p.id)).toEqual([retried.external_id]);
  });

  it('upsertPrices writes one price with billing cycle, trial, base price and grouped country overrides', async () => {
    const s = spec();
    const { external_id } = await adapter.upsertProduct(test, s, 'k');
    const res = await adapter.upsertPrices(test, external_id, s, 'k');
    expect(res.priced_locales).toBe(5);
    expect(res.price_ids).toHaveLength(1);
    const price = (await paddle(test, `/prices/${res.price_ids[0]}`)).body.data;
    expect(price).toMatchObject({
      product_id: external_id,
      status: 'active',
      billing_cycle: { interval: 'month', frequency: 1 },
      trial_period: { interval: 'day', frequency: 7 },
      unit_price: { amount: '999', currency_code: 'USD' },
      custom_data: { product_id: s.product_id, sku: s.sku, tenant_id: 'ten_1' },
    });
    expect(price.unit_price_overrides).toEqual([
      { country_codes: ['CA'], unit_price: { amount: '1299', currency_code: 'CAD' } },
      { country_codes: ['DE', 'FR'], unit_price: { amount: '899', currency_code: 'EUR' } },
      { country_codes: ['GB'], unit_price: { amount: '799', currency_code: 'GBP' } },
    ]);

    // A retry and a changed spec both reuse the same price (PATCH), never a second one.
    const again = await adapter.upsertPrices(test, external_id, s, 'k');
    expect(again.price_ids).toEqual(res.price_ids);
    const changed = {
      ...s,
      trial_days: null,
      prices: [...s.prices.slice(0, 4), { country: 'JP', currency: 'JPY', amount_minor: 1500 }],
    };
    const patched = await adapter.upsertPrices(test, external_id, changed, 'k2');
    expect(patched).toEqual({ priced_locales: 5, price_ids: res.price_ids });
    const prices = mine((await state()).prices, (p) => p.product_id === external_id);
    expect(prices).toHaveLength(1);
    expect(prices[0].trial_period).toBeNull();
    expect(JSON.stringify(prices[0].unit_price_overrides)).toContain('JPY');
  });

  it.each([
    ['weekly', { interval: 'week', frequency: 1 }],
    ['monthly', { interval: 'month', frequency: 1 }],
    ['quarterly', { interval: 'month', frequency: 3 }],
    ['annual', { interval: 'year', frequency: 1 }],
  ] as const)('maps tier %s to billing_cycle %o', async (tier, cycle) => {
    const s = spec({ tier, trial_days: null });
    const { external_id } = await adapter.upsertProduct(test, s, 'k');
    const { price_ids } = await adapter.upsertPrices(test, external_id, s, 'k');
    expect((await paddle(test, `/prices/${price_ids[0]}`)).body.data.billing_cycle).toEqual(cycle);
  });

  it('ensurePaymentLink returns the price as the plan, and refuses before prices exist', async () => {
    const s = spec();
    const { external_id } = await adapter.upsertProduct(test, s, 'k');
    const early = await rejection(adapter.ensurePaymentLink(test, external_id, s, 'app_1', 'k'));
    expect(early).toBeInstanceOf(ProviderRejectedError);
    expect((early as ProviderRejectedError).opts.code).toBe('price_missing');
    const { price_ids } = await adapter.upsertPrices(test, external_id, s, 'k');
    const link = await adapter.ensurePaymentLink(test, external_id, s, 'app_1', 'k');
    expect(link).toEqual({ kind: 'plan', external_id: price_ids[0] });
    expect(await adapter.ensurePaymentLink(test, external_id, s, 'app_2', 'k')).toEqual(link);
  });

  it('stopSales archives the product and its prices, idempotently', async () => {
    const s = spec();
    const { external_id } = await adapter.upsertProduct(test, s, 'k');
    const { price_ids } = await adapter.upsertPrices(test, external_id, s, 'k');
    await adapter.stopSales(test, external_id, s);
    await adapter.stopSales(test, external_id, s);
    const st = await state();
    expect(mine(st.products, (p) => p.id === external_id)[0].status).toBe('archived');
    expect(mine(st.prices, (p) => p.id === price_ids[0])[0].status).toBe('archived');
    const remote = (await adapter.listRemoteProducts(test)).find((p) => p.external_id === external_id);
    expect(remote).toEqual({ external_id, sku: s.sku, name: s.name, active: false, product_id: s.product_id });
    // Gone entirely: nothing left to stop.
    await adapter.stopSales(test, 'pro_01h0000000000000000000000', s);
  });

  it('listRemoteProducts walks every page, and test and live catalogues stay apart', async () => {
    const a = await control<Account>('POST', '/accounts', { account: 'seller_many' });
    const ctx: ProviderContext = {
      ...test,
      credential: { api_key: a.credentials.test.api_key },
      accountRef: a.account,
    };
    const liveCtx: ProviderContext = {
      ...live,
      credential: { api_key: a.credentials.live.api_key },
      accountRef: a.account,
    };
    const total = 205; // more than Paddle's 200-per-page maximum
    for (let i = 0; i < total; i += 25) {
      await Promise.all(
        Array.from({ length: Math.min(25, total - i) }, (_, j) =>
          paddle(ctx, '/products', {
            method: 'POST',
            body: JSON.stringify({
              name: `Bulk ${i + j}`,
              tax_category: 'standard',
              custom_data: { sku: `bulk_${i + j}` },
            }),
          }),
        ),
      );
    }
    let calls = 0;
    const counting = createPspBAdapter({ fetch: (input, init) => ((calls += 1), fetch(input, init)) });
    const remote = await counting.listRemoteProducts(ctx);
    expect(remote).toHaveLength(total);
    expect(new Set(remote.map((p) => p.sku)).size).toBe(total);
    expect(calls).toBe(2);
    expect(await adapter.listRemoteProducts(liveCtx)).toEqual([]);
    const s = spec();
    const liveProduct = await adapter.upsertProduct(liveCtx, s, 'k');
    expect((await adapter.listRemoteProducts(liveCtx)).map((p) => p.external_id)).toEqual([liveProduct.external_id]);
    expect((await paddle(ctx, `/products/${liveProduct.external_id}`)).status).toBe(404);
    expect(mine((await state()).products, (p) => p.id === liveProduct.external_id)).toEqual([]);
    expect((await state()).products.find((p) => p.id === liveProduct.external_id)?._mode).toBe('live');
  });
});

describe('psp_b emulator: durable state', () => {
  it('keeps accounts and catalogue across its own restart when given a state file', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'psp_b-state-'));
    const stateFile = path.join(dir, 'psp_b.json');
    let first: RunningEmulator | undefined = await startEmulator(createEmulator, { port: 0, stateFile });
    let second: RunningEmulator | undefined;
    try {
      const a = (await (
        await fetch(`${first.url}/__control/accounts`, { method: 'POST', body: '{}' })
      ).json()) as Account;
      const ctx: ProviderContext = {
        baseUrl: first.url,
        mode: 'test',
        credential: { api_key: a.credentials.test.api_key },
        accountRef: a.account,
      };
      const s = spec();
      const { external_id } = await adapter.upsertProduct(ctx, s, 'k');
      await first.close();
      first = undefined;
      second = await startEmulator(createEmulator, { port: 0, stateFile });
      const remote = await adapter.listRemoteProducts({ ...ctx, baseUrl: second.url });
      expect(remote.map((p) => p.external_id)).toEqual([external_id]);
    } finally {
      await first?.close();
      await second?.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('psp_b adapter: fault classes', () => {
  it('a dropped connection is unreachable', async () => {
    await control('POST', '/faults', { mode: 'down' });
    const err = await rejection(adapter.checkReachable(test));
    expect(err).toBeInstanceOf(ProviderUnreachableError);
    expect((err as ProviderUnreachableError).retryable).toBe(true);
  });

  it.each([500, 502, 503])('HTTP %i is unreachable', async (status) => {
    await control('POST', '/faults', { mode: 'error', status });
    const err = await rejection(adapter.listRemoteProducts(test));
    expect(err).toBeInstanceOf(ProviderUnreachableError);
    expect((err as ProviderUnreachableError).status).toBe(status);
  });

  it('429 is rate limited with the Retry-After delay', async () => {
    await control('POST', '/faults', { mode: 'rate_limit', retry_after: 7, route: '/products' });
    const err = await rejection(adapter.upsertProduct(test, spec(), 'k'));
    expect(err).toBeInstanceOf(ProviderRateLimitedError);
    expect((err as ProviderRateLimitedError).retryAfterMs).toBe(7000);
  });

  it('latency beyond the timeout is unreachable', async () => {
    await control('POST', '/faults', { mode: 'latency', ms: 1500 });
    const err = await rejection(adapter.checkReachable({ ...test, timeoutMs: 200 }));
    expect(err).toBeInstanceOf(ProviderUnreachableError);
    expect(err.message).toContain('timed out');
  });

  it("a validation error is rejected with Paddle's code and the fields", async () => {
    const s = spec({ prices: [{ country: 'US', currency: 'XXX', amount_minor: 100 }] });
    const { external_id } = await adapter.upsertProduct(test, s, 'k');
    const err = await rejection(adapter.upsertPrices(test, external_id, s, 'k'));
    expect(err).toBeInstanceOf(ProviderRejectedError);
    expect((err as ProviderRejectedError).status).toBe(400);
    expect((err as ProviderRejectedError).opts.code).toBe('invalid_field');
    expect((err as ProviderRejectedError).reason).toContain('unit_price.currency_code');
    expect((err as ProviderRejectedError).retryable).toBe(false);
  });
});
