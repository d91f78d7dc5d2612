import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../emulators/common/host';
import { createEmulator } from '../../emulators/psp_c/emulator';
import { ProviderRateLimitedError, ProviderRejectedError, ProviderUnreachableError } from '../../providers/errors';
import { createPspCAdapter } from '../../providers/psp_c/adapter';
import type { ProductSpec, ProviderContext } from '../../providers/types';
import { controlFor } from '../helpers/emulator-control';

// The psp_c adapter against the real psp_c emulator over HTTP: every method, the fault
// classes, and retries that never leave a second remote object.

let emu: RunningEmulator;
let account: {
  account: string;
  credentials: { test: Record<string, string>; live: Record<string, string> };
  webhook_secret: string;
};
const adapter = createPspCAdapter();

const control = controlFor(() => emu.url);
const state = () => control('GET', '/state') as Promise<Record<string, Record<string, unknown>[]>>;
const ctxFor = (mode: 'test' | 'live' = 'test', extra: Partial<ProviderContext> = {}): ProviderContext => ({
  baseUrl: emu.url,
  mode,
  credential: account.credentials[mode],
  accountRef: account.account,
  timeoutMs: 2_000,
  ...extra,
});
const mineIn = (rows: Record<string, unknown>[] | undefined, productId: string) =>
  (rows ?? []).filter((r) => (r.notes as Record<string, unknown> | undefined)?.product_id === productId);

let seq = 0;
function product(overrides: Partial<ProductSpec> = {}): ProductSpec {
  seq++;
  return {
    product_id: `00000000-0000-4000-8000-${String(seq).padStart(12, '0')}`,
    tenant_id: '11111111-1111-4111-8111-111111111111',
    sku: `pro_${seq}`,
    name: `Pro ${seq}`,
    type: 'subscription',
    tier: 'monthly',
    version: 1,
    prices: [
      { country: 'IN', currency: 'INR', amount_minor: 49_900 },
      { country: 'US', currency: 'USD', amount_minor: 999 },
    ],
    ...overrides,
  };
}

/** A fetch that lets a request reach the emulator, then loses the answer, as a dropped connection would. */
function lossyFetch(lose: (init?: RequestInit) => boolean): typeof fetch {
  return async (input, init) => {
    const res = await fetch(input, init);
    if (lose(init)) {
      await res.arrayBuffer();
      throw new TypeError('fetch failed', { cause: { code: 'ECONNRESET' } });
    }
    return res;
  };
}

beforeAll(async () => {
  emu = await startEmulator(createEmulator, { port: 0 });
  account = await control('POST', '/accounts', {});
});
afterAll(() => emu.close());
beforeEach(() => control('DELETE', '/faults'));

describe('psp_c control: accounts', () => {
  it('creates Razorpay-shaped key pairs per mode and returns an existing account by id', async () => {
    expect(account.account).toMatch(/^acc_[A-Za-z0-9]{14}$/);
    expect(account.credentials.test.key_id).toMatch(/^rzp_test_/);
    expect(account.credentials.live.key_id).toMatch(/^rzp_live_/);
    expect(Object.keys(account.credentials.test).sort()).toEqual(['key_id', 'key_secret']);
    const again = await control('POST', '/accounts', { account: account.account });
    expect(again).toEqual(account);
    const named = await control('POST', '/accounts', { account: 'acc_Named000000001' });
    expect(named.account).toBe('acc_Named000000001');
  });
});

describe('psp_c adapter: reach and auth', () => {
  it('checkReachable passes with the test key', async () => {
    await expect(adapter.checkReachable(ctxFor())).resolves.toBeUndefined();
  });

  it('a wrong key secret is rejected with Razorpay’s reason', async () => {
    const err = await adapter
      .checkReachable(ctxFor('test', { credential: { ...account.credentials.test, key_secret: 'nope' } }))
      .catch((e) => e);
    expect(err).toBeInstanceOf(ProviderRejectedError);
    expect(err.status).toBe(401);
    expect(err.reason).toContain('Authentication failed');
    expect(err.message).not.toContain(account.credentials.test.key_secret);
  });

  it('a test key used for a live call is refused before any request', async () => {
    const err = await adapter.checkReachable(ctxFor('live', { credential: account.credentials.test })).catch((e) => e);
    expect(err).toBeInstanceOf(ProviderRejectedError);
    expect(err.opts.code).toBe('credential_mode_mismatch');
  });
});

describe('psp_c adapter: catalogue', () => {
  it('upsertProduct creates one item tagged with our ids and updates it in place', async () => {
    const spec = product();
    const first = await adapter.upsertProduct(ctxFor(), spec, 'k1');
    expect(first.external_id).toMatch(/^item_/);
    const again = await adapter.upsertProduct(ctxFor(), spec, 'k1');
    expect(again.external_id).toBe(first.external_id);
    const renamed = await adapter.upsertProduct(ctxFor(), { ...spec, name: 'Pro Renamed', version: 2 }, 'k2');
    expect(renamed.external_id).toBe(first.external_id);

    const items = mineIn((await state()).items, spec.product_id);
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({
      name: 'Pro Renamed',
      amount: 49_900,
      currency: 'INR',
      active: true,
      _mode: 'test',
      _account: account.account,
    });
    expect(items[0].notes).toEqual({ product_id: spec.product_id, sku: spec.sku, tenant_id: spec.tenant_id });
  });

  it('a test key never sees live objects', async () => {
    const spec = product();
    await adapter.upsertProduct(ctxFor('live'), spec, 'k');
    const test = await adapter.listRemoteProducts(ctxFor('test'));
    const live = await adapter.listRemoteProducts(ctxFor('live'));
    expect(test.some((p) => p.product_id === spec.product_id)).toBe(false);
    expect(live.some((p) => p.product_id === spec.product_id)).toBe(true);
  });

  it('listRemoteProducts reads every page (count/skip) and plan-only products', async () => {
    const auth = `Basic ${Buffer.from(`${account.credentials.test.key_id}:${account.credentials.test.key_secret}`).toString('base64')}`;
    for (let i = 0; i < 105; i++) {
      const res = await fetch(`${emu.url}/v1/items`, {
        method: 'POST',
        headers: { authorization: auth, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `Bulk ${i}`, amount: 1_000 + i, currency: 'INR' }),
      });
      expect(res.status).toBe(200);
    }
    const planOnly = product();
    await adapter.upsertPrices(ctxFor(), 'none', planOnly, 'k');
    const page = await (
      await fetch(`${emu.url}/v1/items?count=100&skip=0`, { headers: { authorization: auth } })
    ).json();
    expect(page).toMatchObject({ entity: 'collection', count: 100 });

    const remote = await adapter.listRemoteProducts(ctxFor());
    expect(remote.filter((p) => p.name.startsWith('Bulk '))).toHaveLength(105);
    const fromPlan = remote.find((p) => p.product_id === planOnly.product_id);
    expect(fromPlan).toMatchObject({ sku: planOnly.sku, active: true });
    expect(fromPlan?.external_id).toMatch(/^plan_/);
  });

  it('upsertPrices makes one plan per (country, currency) at the tier cadence and a new plan for a new price', async () => {
    const spec = product({
      tier: 'quarterly',
      prices: [
        { country: 'IN', currency: 'INR', amount_minor: 129_900 },
        { country: 'US', currency: 'USD', amount_minor: 2_999 },
        { country: 'DE', currency: 'EUR', amount_minor: 2_799 },
      ],
    });
    const { external_id } = await adapter.upsertProduct(ctxFor(), spec, 'k');
    const first = await adapter.upsertPrices(ctxFor(), external_id, spec, 'k');
    expect(first.priced_locales).toBe(3);
    expect(first.price_ids.every((id) => id.startsWith('plan_'))).toBe(true);
    const again = await adapter.upsertPrices(ctxFor(), external_id, spec, 'k');
    expect(again.price_ids).toEqual(first.price_ids);

    let plans = mineIn((await state()).plans, spec.product_id);
    expect(plans).toHaveLength(3);
    expect(plans.every((p) => p.period === 'monthly' && p.interval === 3)).toBe(true);
    expect(plans.map((p) => (p.notes as Record<string, string>).country).sort()).toEqual(['DE', 'IN', 'US']);

    const repriced = {
      ...spec,
      version: 2,
      prices: spec.prices.map((p) => (p.country === 'US' ? { ...p, amount_minor: 3_499 } : p)),
    };
    const second = await adapter.upsertPrices(ctxFor(), external_id, repriced, 'k2');
    expect(second.priced_locales).toBe(3);
    plans = mineIn((await state()).plans, spec.product_id);
    expect(plans).toHaveLength(4);
    expect(second.price_ids.filter((id) => first.price_ids.includes(id))).toHaveLength(2);
  });

  it('tiers map to Razorpay period × interval', async () => {
    const cases = [
      ['weekly', 'weekly', 1],
      ['monthly', 'monthly', 1],
      ['annual', 'yearly', 1],
    ] as const;
    for (const [tier, period, interval] of cases) {
      const spec = product({ tier, prices: [{ country: 'IN', currency: 'INR', amount_minor: 9_900 }] });
      await adapter.upsertPrices(ctxFor(), 'x', spec, 'k');
      const [plan] = mineIn((await state()).plans, spec.product_id);
      expect(plan).toMatchObject({ period, interval });
    }
  });
});

describe('psp_c adapter: payment links, offers, stop sales', () => {
  it('ensurePaymentLink returns one short_url per app, product and mode', async () => {
    const spec = product();
    const { external_id } = await adapter.upsertProduct(ctxFor(), spec, 'k');
    const link = await adapter.ensurePaymentLink(ctxFor(), external_id, spec, 'app-1', 'k');
    expect(link.kind).toBe('payment_link');
    expect(link.external_id).toMatch(/^plink_/);
    expect(link.url).toMatch(new RegExp(`^${emu.url}/i/`));
    const again = await adapter.ensurePaymentLink(ctxFor(), external_id, spec, 'app-1', 'k');
    expect(again.external_id).toBe(link.external_id);
    const otherApp = await adapter.ensurePaymentLink(ctxFor(), external_id, spec, 'app-2', 'k');
    expect(otherApp.external_id).not.toBe(link.external_id);

    const links = mineIn((await state()).payment_links, spec.product_id);
    expect(links).toHaveLength(2);
    expect(links.find((l) => l.id === link.external_id)).toMatchObject({
      amount: 49_900,
      currency: 'INR',
      status: 'created',
      notes: { app_id: 'app-1', product_id: spec.product_id, sku: spec.sku },
    });
    const page = await fetch(link.url!);
    expect(page.status).toBe(200);
  });

  it('the emulator refuses a duplicate reference_id as Razorpay does', async () => {
    const auth = `Basic ${Buffer.from(`${account.credentials.test.key_id}:${account.credentials.test.key_secret}`).toString('base64')}`;
    const post = () =>
      fetch(`${emu.url}/v1/payment_links`, {
        method: 'POST',
        headers: { authorization: auth, 'content-type': 'application/json' },
        body: JSON.stringify({ amount: 1_000, currency: 'INR', reference_id: 'dup-ref-1' }),
      });
    expect((await post()).status).toBe(200);
    const second = await post();
    expect(second.status).toBe(400);
    const body = await second.json();
    expect(body.error).toMatchObject({ code: 'BAD_REQUEST_ERROR', field: 'reference_id' });
    expect(body.error.description).toContain('dup-ref-1');
  });

  it('a paid link is used up: the next ensure makes a fresh one', async () => {
    const spec = product();
    const first = await adapter.ensurePaymentLink(ctxFor(), 'x', spec, 'app-1', 'k');
    const sent = await control('POST', '/events', {
      type: 'payment_link.paid',
      target: 'http://127.0.0.1:9/none',
      data: { payment_link_id: first.external_id },
    });
    expect(sent.id).toBeTruthy();
    const next = await adapter.ensurePaymentLink(ctxFor(), 'x', spec, 'app-1', 'k');
    expect(next.external_id).not.toBe(first.external_id);
    expect(await adapter.ensurePaymentLink(ctxFor(), 'x', spec, 'app-1', 'k')).toEqual(next);
  });

  it('stopSales deactivates the item and cancels the open links', async () => {
    const spec = product();
    const { external_id } = await adapter.upsertProduct(ctxFor(), spec, 'k');
    const link = await adapter.ensurePaymentLink(ctxFor(), external_id, spec, 'app-1', 'k');
    await adapter.stopSales(ctxFor(), external_id, spec);
    const s = await state();
    expect(mineIn(s.items, spec.product_id)[0]).toMatchObject({ active: false });
    expect(mineIn(s.payment_links, spec.product_id).find((l) => l.id === link.external_id)).toMatchObject({
      status: 'cancelled',
    });
    const remote = (await adapter.listRemoteProducts(ctxFor())).find((p) => p.product_id === spec.product_id);
    expect(remote?.active).toBe(false);
    await expect(adapter.stopSales(ctxFor(), external_id, spec)).resolves.toBeUndefined();
    // Selling again reactivates the item and opens a new link.
    await adapter.upsertProduct(ctxFor(), spec, 'k3');
    const reopened = await adapter.ensurePaymentLink(ctxFor(), external_id, spec, 'app-1', 'k3');
    expect(reopened.external_id).not.toBe(link.external_id);
  });
});

describe('psp_c adapter: fault classes', () => {
  it('a dropped connection is unreachable', async () => {
    await control('POST', '/faults', { mode: 'down' });
    const err = await adapter.checkReachable(ctxFor()).catch((e) => e);
    expect(err).toBeInstanceOf(ProviderUnreachableError);
    expect(err.retryable).toBe(true);
  });

  it('5xx is unreachable, with the status', async () => {
    for (const status of [500, 503]) {
      await control('DELETE', '/faults');
      await control('POST', '/faults', { mode: 'error', status });
      const err = await adapter.listRemoteProducts(ctxFor()).catch((e) => e);
      expect(err).toBeInstanceOf(ProviderUnreachableError);
      expect(err.status).toBe(status);
    }
  });

  it('429 is rate limited with the Retry-After delay', async () => {
    await control('POST', '/faults', { mode: 'rate_limit', retry_after: 7 });
    const err = await adapter.upsertProduct(ctxFor(), product(), 'k').catch((e) => e);
    expect(err).toBeInstanceOf(ProviderRateLimitedError);
    expect(err.retryAfterMs).toBe(7_000);
  });

  it('a route-limited fault hits only that route', async () => {
    await control('POST', '/faults', { mode: 'error', status: 502, route: '/v1/plans' });
    const spec = product();
    await expect(adapter.upsertProduct(ctxFor(), spec, 'k')).resolves.toBeTruthy();
    await expect(adapter.upsertPrices(ctxFor(), 'x', spec, 'k')).rejects.toBeInstanceOf(ProviderUnreachableError);
  });

  it('no answer within the timeout is unreachable', async () => {
    await control('POST', '/faults', { mode: 'latency', ms: 800 });
    const err = await adapter.checkReachable(ctxFor('test', { timeoutMs: 200 })).catch((e) => e);
    expect(err).toBeInstanceOf(ProviderUnreachableError);
    expect(err.reason).toContain('200 ms');
  });

  it('400 is rejected with Razorpay’s description and field', async () => {
    const spec = product({ prices: [{ country: 'IN', currency: 'INR', amount_minor: 50 }] });
    const err = await adapter.upsertPrices(ctxFor(), 'x', spec, 'k').catch((e) => e);
    expect(err).toBeInstanceOf(ProviderRejectedError);
    expect(err.status).toBe(400);
    expect(err.retryable).toBe(false);
    expect(err.opts.code).toBe('BAD_REQUEST_ERROR');
    expect(err.reason).toMatch(/amount must be atleast/);
    expect(err.reason).toContain('field amount');
  });
});

describe('psp_c adapter: retries after a lost answer leave exactly one remote object', () => {
  const lostOnce = () => {
    let armed = true;
    return createPspCAdapter({
      fetch: lossyFetch((init) => {
        if (armed && init?.method === 'POST') {
          armed = false;
          return true;
        }
        return false;
      }),
    });
  };

  it('item, plans and payment link', async () => {
    const spec = product();
    const flaky = lostOnce();
    await expect(flaky.upsertProduct(ctxFor(), spec, 'k')).rejects.toBeInstanceOf(ProviderUnreachableError);
    const item = await flaky.upsertProduct(ctxFor(), spec, 'k');

    const flakyPlans = lostOnce();
    await expect(flakyPlans.upsertPrices(ctxFor(), item.external_id, spec, 'k')).rejects.toBeInstanceOf(
      ProviderUnreachableError,
    );
    await flakyPlans.upsertPrices(ctxFor(), item.external_id, spec, 'k');

    const flakyLink = lostOnce();
    await expect(flakyLink.ensurePaymentLink(ctxFor(), item.external_id, spec, 'app-9', 'k')).rejects.toBeInstanceOf(
      ProviderUnreachableError,
    );
    const link = await flakyLink.ensurePaymentLink(ctxFor(), item.external_id, spec, 'app-9', 'k');

    const s = await state();
    expect(mineIn(s.items, spec.product_id)).toHaveLength(1);
    expect(mineIn(s.plans, spec.product_id)).toHaveLength(spec.prices.length);
    expect(
      mineIn(s.payment_links, spec.product_id).filter((l) => (l.notes as Record<string, string>).app_id === 'app-9'),
    ).toEqual([expect.objectContaining({ id: link.external_id })]);
  });
});
