import crypto from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Billing, MemoryStorage, appAccountTokenFor as sdkToken } from '../../sdk/src/index';
import { appAccountTokenFor as serviceToken } from '../../providers/store_ios/app-account-token';
import { entitlementWaits } from '../../api/sdk/entitlement-waits';
import { call, newTenant, startApi } from '../helpers/api';
import { testDb } from '../helpers/db';
import { makeEntitlement } from '../helpers/factories';
import { until } from '../helpers/until';

type Tenant = Awaited<ReturnType<typeof newTenant>>;

/**
 * The SDK's side of the bounded wait, against the real service: after the checkout tab closes,
 * `checkout({ waitForPremium })` makes one request the service holds until the purchase commits,
 * and resolves `purchased` then; never a poll.
 */
describe('SDK: checkout waits for the purchase to show', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let tenant: Tenant;
  beforeAll(async () => {
    api = await startApi();
    tenant = await newTenant('sdk-wait');
    const [product] = await testDb()('products')
      .insert({
        tenant_id: tenant.tenant_id,
        app_id: tenant.app_id,
        sku: 'premium_monthly',
        name: 'Premium',
        tier: 'monthly',
      })
      .returning('id');
    await testDb()('payment_links').insert({
      tenant_id: tenant.tenant_id,
      app_id: tenant.app_id,
      product_id: product.id,
      provider: 'psp_a',
      mode: 'test',
      external_id: 'plink_1',
      url: 'https://checkout.example/pay/1',
    });
  });
  afterEach(() => Billing.reset());
  afterAll(async () => api?.close());

  /** The commit the provider's webhook would cause. */
  const grant = async (user: string) => {
    await makeEntitlement(tenant.tenant_id, { appUserId: user, provider: 'psp_a' });
  };
  const waiting = (n: number) =>
    until(
      `${n} waiter(s)`,
      async () => entitlementWaits(api.services)!.stats(tenant.tenant_id).waiting,
      (w) => w === n,
    );
  const configure = (appUserId: string, openCheckout: (url: string) => Promise<void>) => {
    const requests: string[] = [];
    const billing = Billing.configure({
      publishableKey: tenant.publishable_key,
      backend: api.apiRoot,
      appUserId,
      platform: 'web',
      storage: new MemoryStorage(),
      openCheckout,
      fetch: ((u: string, i: RequestInit) => {
        const url = new URL(u);
        requests.push(`${i.method} ${url.pathname}${url.search}`);
        return fetch(u, i);
      }) as typeof fetch,
    });
    return { billing, requests };
  };

  it('tab closes before the webhook lands → one held request → purchased as soon as the entitlement commits', async () => {
    let closeTab!: () => void;
    const tabClosed = new Promise<void>((r) => (closeTab = r));
    const { billing, requests } = configure('buyer-1', () => tabClosed);
    expect(await billing.isPremium()).toBe(false);

    const result = billing.checkout({ planId: 'premium_monthly', product: { kind: 'digital' }, waitForPremium: true });
    closeTab(); // the provider's events are still on their way
    await waiting(1);
    await grant('buyer-1');
    const r = await result;
    expect(r).toMatchObject({
      state: 'purchased',
      lane: 'web',
      url: expect.stringContaining('client_reference_id=buyer-1'),
      entitlements: { isPremium: true, stale: false },
    });
    expect(requests).toEqual([
      'GET /v1/sdk/subscribers/buyer-1',
      'GET /v1/sdk/checkout?plan_id=premium_monthly',
      'GET /v1/sdk/subscribers/buyer-1?wait_for=premium&timeout_ms=20000',
    ]);
    // The answer is cached: the app's next check asks nobody.
    expect(await billing.isPremium()).toBe(true);
    expect(requests).toHaveLength(3);
  });

  it('nothing bought within the bound → state opened with what is true (free); the wait was one request', async () => {
    const { billing, requests } = configure('window-shopper', async () => undefined);
    const r = await billing.checkout({
      planId: 'premium_monthly',
      product: { kind: 'digital' },
      waitForPremium: { timeoutMs: 600 },
    });
    expect(r).toMatchObject({ state: 'opened', lane: 'web', entitlements: { isPremium: false } });
    expect(requests.filter((q) => q.includes('wait_for'))).toEqual([
      'GET /v1/sdk/subscribers/window-shopper?wait_for=premium&timeout_ms=600',
    ]);
  });

  it('the service refuses to hold the wait (429: the app user already has 2) → one plain forced read instead', async () => {
    const busy = [1, 2].map(() =>
      call(api.apiRoot, '/v1/sdk/subscribers/busy-free?wait_for=premium&timeout_ms=3000', tenant.publishable_key),
    );
    await waiting(2);
    const { billing, requests } = configure('busy-free', async () => undefined);
    const answer = await billing.waitForPremium({ timeoutMs: 3000 });
    expect(answer).toMatchObject({ isPremium: false, stale: false });
    expect(requests).toEqual([
      'GET /v1/sdk/subscribers/busy-free?wait_for=premium&timeout_ms=3000',
      'GET /v1/sdk/subscribers/busy-free',
    ]);
    // Granting ends the held waits at once (they are answered premium).
    await grant('busy-free');
    expect((await Promise.all(busy)).map((r) => r.body.is_premium)).toEqual([true, true]);
  });

  it('concurrent waits share one request; without waitForPremium checkout returns at once (opened), as before', async () => {
    const { billing, requests } = configure('sharer', async () => undefined);
    const [a, b] = [billing.waitForPremium({ timeoutMs: 3000 }), billing.waitForPremium({ timeoutMs: 3000 })];
    await waiting(1);
    await grant('sharer');
    expect((await a).isPremium).toBe(true);
    expect((await b).isPremium).toBe(true);
    expect(requests.filter((q) => q.includes('wait_for'))).toHaveLength(1);
    const plain = await billing.checkout({ planId: 'premium_monthly', product: { kind: 'digital' } });
    expect(plain).toEqual({ state: 'opened', lane: 'web', url: expect.any(String) });
  });

  it("the SDK derives StoreKit's appAccountToken exactly as the service does", () => {
    for (const id of [
      '',
      'u',
      'user-42',
      'é日本語',
      'x'.repeat(55),
      'y'.repeat(56),
      'z'.repeat(64),
      'w'.repeat(200),
      crypto.randomUUID().toUpperCase(),
    ])
      expect(sdkToken(id)).toBe(serviceToken(id));
  });
});
