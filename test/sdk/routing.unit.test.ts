import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Billing, MemoryStorage, routeCheckout, type StoreBilling, type StorePurchase } from '../../sdk/src/index';
import { FakeClock, activeEntitlement, startContractServer } from './contract-server';

let server: Awaited<ReturnType<typeof startContractServer>>;
let clock: FakeClock;
let opened: string[];

beforeEach(async () => {
  Billing.reset();
  server = await startContractServer();
  clock = new FakeClock();
  opened = [];
});
afterEach(async () => {
  Billing.reset();
  await server.close();
});

function storeBilling(
  result: StorePurchase | null | Error = { purchaseToken: 'tok_1', productId: 'premium_monthly' },
  activity: unknown = { name: 'MainActivity' },
) {
  const calls: Array<{ productId: string; activity: unknown }> = [];
  const sb: StoreBilling & { calls: typeof calls } = {
    activity,
    calls,
    async purchase(args) {
      calls.push(args);
      if (result instanceof Error) throw result;
      return result;
    },
  };
  return sb;
}

const configure = (extra: Partial<Parameters<typeof Billing.configure>[0]> = {}) =>
  Billing.configure({
    publishableKey: 'pk_test_abc',
    backend: server.url,
    appUserId: 'u1',
    platform: 'android',
    clock,
    storage: new MemoryStorage(),
    openCheckout: (url) => void opened.push(url),
    ...extra,
  });

const checkoutRequests = () => server.requests.filter((r) => r.path.startsWith('/v1/sdk/checkout'));

describe('Android + digital + store product id → the store billing flow', () => {
  it('buys through storeBilling with the foreground activity, registers the purchase, refreshes', async () => {
    const sb = storeBilling();
    const billing = configure({ storeBilling: sb });
    expect(await billing.isPremium()).toBe(false);
    server.state.entitlements = [{ ...activeEntitlement, provider: 'store_android' }];

    const result = await billing.checkout({
      planId: 'plan_monthly',
      product: { kind: 'digital', android_store_product_id: 'premium_monthly' },
    });

    expect(result).toMatchObject({
      state: 'purchased',
      lane: 'store',
      purchase: { purchaseToken: 'tok_1' },
      entitlements: { isPremium: true, stale: false },
    });
    expect(sb.calls).toEqual([{ productId: 'premium_monthly', activity: { name: 'MainActivity' } }]);
    const registration = server.requests.find((r) => r.path === '/v1/sdk/store-purchases');
    expect(registration).toMatchObject({
      method: 'POST',
      authorization: 'Bearer pk_test_abc',
      body: {
        app_user_id: 'u1',
        provider: 'store_android',
        product_id: 'premium_monthly',
        purchase_token: 'tok_1',
        plan_id: 'plan_monthly',
      },
    });
    // Registration comes before the refresh, and the refresh was not coalesced away.
    const paths = server.requests.map((r) => r.path);
    expect(paths.indexOf('/v1/sdk/store-purchases')).toBeLessThan(paths.lastIndexOf('/v1/sdk/subscribers/u1'));
    expect(server.subscriberRequests()).toHaveLength(2);
    expect(await billing.isPremium()).toBe(true);
    expect(opened).toEqual([]);
    expect(checkoutRequests()).toEqual([]);
  });

  it('the id is trimmed before it reaches the store', async () => {
    const sb = storeBilling();
    await configure({ storeBilling: sb }).checkout({
      planId: 'p',
      product: { kind: 'digital', android_store_product_id: '  premium_monthly ' },
    });
    expect(sb.calls[0].productId).toBe('premium_monthly');
  });

  it('without storeBilling → the Error state, never the browser', async () => {
    const result = await configure().checkout({
      planId: 'p',
      product: { kind: 'digital', android_store_product_id: 'premium_monthly' },
    });
    expect(result).toMatchObject({
      state: 'error',
      lane: 'blocked',
      reason: 'store_billing_unavailable',
      error: { code: 'store_billing_unavailable' },
    });
    expect(opened).toEqual([]);
    expect(server.requests).toEqual([]);
  });

  it('storeBilling without the foreground activity → the Error state, never the browser', async () => {
    const sb = storeBilling(undefined, null);
    const result = await configure({ storeBilling: sb }).checkout({
      planId: 'p',
      product: { kind: 'digital', android_store_product_id: 'premium_monthly' },
    });
    expect(result).toMatchObject({ state: 'error', reason: 'store_billing_unavailable' });
    expect(result.state === 'error' && result.error.message).toMatch(/foreground activity/);
    expect(sb.calls).toEqual([]);
    expect(opened).toEqual([]);
    expect(server.requests).toEqual([]);
  });

  it('a cancelled purchase registers nothing', async () => {
    const result = await configure({ storeBilling: storeBilling(null) }).checkout({
      planId: 'p',
      product: { kind: 'digital', android_store_product_id: 'x' },
    });
    expect(result).toEqual({ state: 'cancelled', lane: 'store' });
    expect(server.requests).toEqual([]);
  });

  it('a failing store flow → the Error state with its reason', async () => {
    const result = await configure({ storeBilling: storeBilling(new Error('BILLING_UNAVAILABLE')) }).checkout({
      planId: 'p',
      product: { kind: 'digital', android_store_product_id: 'x' },
    });
    expect(result).toMatchObject({ state: 'error', lane: 'store', reason: 'store_purchase_failed' });
    expect(opened).toEqual([]);
  });

  it('a reused purchase token refused by the service → the Error state carrying the service code', async () => {
    server.state.storePurchaseStatus = 409;
    const result = await configure({ storeBilling: storeBilling() }).checkout({
      planId: 'p',
      product: { kind: 'digital', android_store_product_id: 'x' },
    });
    expect(result).toMatchObject({
      state: 'error',
      lane: 'store',
      reason: 'purchase_registration_failed',
      error: { status: 409, serviceCode: 'purchase_token_reused' },
    });
    expect(server.subscriberRequests()).toEqual([]);
  });
});

describe('Android + digital + missing or blank id → the Error state; the browser is never opened', () => {
  it.each([
    ['missing', undefined],
    ['null', null],
    ['empty', ''],
    ['whitespace', ' \t\n '],
  ])('%s id', async (_label, id) => {
    const sb = storeBilling();
    const result = await configure({ storeBilling: sb }).checkout({
      planId: 'plan_monthly',
      product: { kind: 'digital', android_store_product_id: id as string | undefined },
    });
    expect(result).toMatchObject({
      state: 'error',
      lane: 'blocked',
      reason: 'store_product_id_missing',
      error: { code: 'store_product_id_missing' },
    });
    expect(opened).toEqual([]);
    expect(sb.calls).toEqual([]);
    expect(server.requests).toEqual([]); // not even the checkout URL is asked for
  });
});

describe('Android + physical → the web payment page', () => {
  it('opens the payment link through openCheckout, even with storeBilling and a store id present', async () => {
    const sb = storeBilling();
    const result = await configure({ storeBilling: sb }).checkout({
      planId: 'plan_mug',
      product: { kind: 'physical', android_store_product_id: 'ignored' },
    });
    expect(result).toEqual({
      state: 'opened',
      lane: 'web',
      url: 'https://checkout.example/pay/1?client_reference_id=u1',
    });
    expect(opened).toEqual(['https://checkout.example/pay/1?client_reference_id=u1']);
    expect(checkoutRequests().map((r) => r.path)).toEqual(['/v1/sdk/checkout?plan_id=plan_mug']);
    expect(sb.calls).toEqual([]);
  });
});

describe('web, desktop, iOS, macOS → the existing web checkout path', () => {
  it.each(['web', 'desktop', 'ios', 'macos'] as const)(
    '%s digital, even with an Android store id',
    async (platform) => {
      const sb = storeBilling();
      const result = await configure({ platform, storeBilling: sb }).checkout({
        planId: 'plan_monthly',
        product: { kind: 'digital', android_store_product_id: 'premium_monthly' },
      });
      expect(result).toMatchObject({ state: 'opened', lane: 'web' });
      expect(opened).toEqual(['https://checkout.example/pay/1?client_reference_id=u1']);
      expect(sb.calls).toEqual([]);
    },
  );

  it.each(['web', 'ios'] as const)('%s physical', async (platform) => {
    const result = await configure({ platform }).checkout({ planId: 'plan_mug', product: { kind: 'physical' } });
    expect(result).toMatchObject({ state: 'opened', lane: 'web' });
  });

  it('no payment link for the plan → the Error state (checkout_unavailable), nothing opened', async () => {
    server.state.checkoutUrl = null;
    const result = await configure({ platform: 'ios' }).checkout({ planId: 'plan_none', product: { kind: 'digital' } });
    expect(result).toMatchObject({
      state: 'error',
      lane: 'web',
      reason: 'checkout_unavailable',
      error: { status: 404, serviceCode: 'not_found' },
    });
    expect(opened).toEqual([]);
  });

  it('no openCheckout hook and no window → the Error state', async () => {
    const result = await configure({ platform: 'ios', openCheckout: undefined }).checkout({
      planId: 'p',
      product: { kind: 'digital' },
    });
    expect(result).toMatchObject({ state: 'error', reason: 'checkout_unavailable' });
  });
});

describe('routeCheckout, the table as a pure function', () => {
  const sb = storeBilling();
  it('matches every row', () => {
    expect(routeCheckout('android', { kind: 'digital', android_store_product_id: 'x' }, sb)).toEqual({
      lane: 'store',
      store: 'store_android',
      productId: 'x',
    });
    expect(routeCheckout('ios', { kind: 'digital', ios_store_product_id: ' premium ' }, sb)).toEqual({
      lane: 'store',
      store: 'store_ios',
      productId: 'premium',
    });
    expect(routeCheckout('macos', { kind: 'digital', ios_store_product_id: 'premium' }, sb)).toMatchObject({
      lane: 'store',
      store: 'store_ios',
    });
    expect(routeCheckout('ios', { kind: 'digital', ios_store_product_id: 'premium' }, undefined)).toEqual({
      lane: 'web',
    });
    expect(routeCheckout('ios', { kind: 'physical', ios_store_product_id: 'premium' }, sb)).toEqual({ lane: 'web' });
    expect(routeCheckout('android', { kind: 'digital', android_store_product_id: '   ' }, sb)).toMatchObject({
      lane: 'blocked',
      code: 'store_product_id_missing',
    });
    expect(routeCheckout('android', { kind: 'digital', android_store_product_id: 'x' }, undefined)).toMatchObject({
      lane: 'blocked',
      code: 'store_billing_unavailable',
    });
    expect(routeCheckout('android', { kind: 'physical' }, undefined)).toEqual({ lane: 'web' });
    for (const p of ['web', 'desktop', 'ios', 'macos'] as const)
      expect(routeCheckout(p, { kind: 'digital' }, undefined)).toEqual({ lane: 'web' });
  });
});
