import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Billing, BillingError, MemoryStorage } from '../../sdk/src/index';
import { FakeClock, HOUR, WEEK, activeEntitlement, startContractServer } from './contract-server';
import { until } from '../helpers/until';

let server: Awaited<ReturnType<typeof startContractServer>>;
let clock: FakeClock;

beforeEach(async () => {
  Billing.reset();
  server = await startContractServer();
  clock = new FakeClock();
});
afterEach(async () => {
  Billing.reset();
  await server.close();
});

const configure = (extra: Partial<Parameters<typeof Billing.configure>[0]> = {}) =>
  Billing.configure({
    publishableKey: 'pk_test_abc',
    backend: server.url,
    appUserId: 'u1',
    platform: 'web',
    clock,
    storage: new MemoryStorage(),
    ...extra,
  });

describe('cache-first premium check', () => {
  it('weekly TTL: no request before expiry, exactly one after', async () => {
    const billing = configure();
    expect(await billing.isPremium()).toBe(false);
    expect(server.subscriberRequests()).toHaveLength(1);
    expect(server.subscriberRequests()[0].authorization).toBe('Bearer pk_test_abc');

    server.state.entitlements = [activeEntitlement]; // the service changed; the cache has not expired
    clock.advance(WEEK - 1);
    expect(await billing.isPremium()).toBe(false);
    expect(await billing.getEntitlements()).toMatchObject({ isPremium: false, cacheTtlSeconds: 604_800, stale: false });
    expect(server.subscriberRequests()).toHaveLength(1);

    clock.advance(1);
    expect(await billing.isPremium()).toBe(true);
    expect(server.subscriberRequests()).toHaveLength(2);
    expect(await billing.isPremium()).toBe(true);
    expect(server.subscriberRequests()).toHaveLength(2);
  });

  it('hourly during a trial: the TTL is what the service said', async () => {
    server.state.entitlements = [{ ...activeEntitlement, period_type: 'trial' }];
    server.state.cacheTtlSeconds = 3600;
    const billing = configure();
    const first = await billing.getEntitlements();
    expect(first).toMatchObject({ isPremium: true, cacheTtlSeconds: 3600, expiresAt: clock.now() + HOUR });
    clock.advance(HOUR - 1);
    await billing.isPremium();
    expect(server.subscriberRequests()).toHaveLength(1);
    server.state.entitlements = [{ ...activeEntitlement, state: 'expired', is_active: false }];
    clock.advance(1);
    expect(await billing.isPremium()).toBe(false);
    expect(server.subscriberRequests()).toHaveLength(2);
  });

  it('a missing TTL falls back to a week', async () => {
    const billing = configure({
      fetch: (async (u: any, i: any) => {
        const res = await fetch(u, i);
        const body = await res.json();
        delete body.cache_ttl_seconds;
        return new Response(JSON.stringify(body), { status: res.status });
      }) as typeof fetch,
    });
    expect((await billing.getEntitlements()).cacheTtlSeconds).toBe(604_800);
  });

  it('concurrent checks at start share one request', async () => {
    const billing = configure();
    await Promise.all([billing.isPremium(), billing.isPremium(), billing.getEntitlements()]);
    expect(server.subscriberRequests()).toHaveLength(1);
  });

  it('the cache survives a new instance through the pluggable storage', async () => {
    const storage = new MemoryStorage();
    await configure({ storage }).isPremium();
    Billing.reset();
    await configure({ storage }).isPremium();
    expect(server.subscriberRequests()).toHaveLength(1);
  });

  it('answers are scoped by key and user: another user does not read this one', async () => {
    const storage = new MemoryStorage();
    server.state.entitlements = [activeEntitlement];
    expect(await configure({ storage }).isPremium()).toBe(true);
    Billing.reset();
    server.state.entitlements = [];
    expect(await configure({ storage, appUserId: 'u2' }).isPremium()).toBe(false);
    expect(server.subscriberRequests().map((r) => r.path)).toEqual([
      '/v1/sdk/subscribers/u1',
      '/v1/sdk/subscribers/u2',
    ]);
  });

  it('identify() answers for the signed-in user from then on: their answer cached, the anonymous one not served', async () => {
    const anon = Billing.anonymousId();
    expect(anon).toMatch(/^\$RCAnonymousID:[0-9a-f]{32}$/);
    expect(Billing.anonymousId()).not.toBe(anon);
    const billing = configure({ appUserId: anon });
    expect(await billing.isPremium()).toBe(false);
    server.state.entitlements = [activeEntitlement];
    const signedIn = await billing.identify('user-42');
    expect(signedIn).toMatchObject({ appUserId: 'user-42', isPremium: true });
    expect(billing.appUserId).toBe('user-42');
    // Cached under the new user: the next check asks nothing; the same id again is no request either.
    expect(await billing.isPremium()).toBe(true);
    await billing.identify('user-42');
    expect(server.subscriberRequests().map((r) => [r.method, r.path, r.body])).toEqual([
      ['GET', `/v1/sdk/subscribers/${encodeURIComponent(anon)}`, undefined],
      ['POST', `/v1/sdk/subscribers/${encodeURIComponent(anon)}/identify`, { new_app_user_id: 'user-42' }],
    ]);
    await expect(billing.identify('')).rejects.toMatchObject({ code: 'invalid_config' });
  });
});

describe('offline', () => {
  it('answers the last known value, marked stale, and is fresh again once back', async () => {
    server.state.entitlements = [activeEntitlement];
    const billing = configure();
    expect(await billing.isPremium()).toBe(true);
    server.setOffline(true);
    clock.advance(WEEK + 1);
    const offline = await billing.getEntitlements();
    expect(offline).toMatchObject({ isPremium: true, stale: true });
    expect(await billing.isPremium()).toBe(true);
    const forced = await billing.refresh();
    expect(forced.stale).toBe(true);

    server.setOffline(false);
    clock.advance(60_000);
    expect(await billing.getEntitlements()).toMatchObject({ isPremium: true, stale: false });
  });

  it('a 5xx counts as offline too: stale when something is cached, typed error when not', async () => {
    const storage = new MemoryStorage();
    server.state.entitlements = [activeEntitlement];
    await configure({ storage }).isPremium();
    Billing.reset();
    const unavailable = (async () => new Response('{"error":"server_misconfigured"}', { status: 503 })) as typeof fetch;
    clock.advance(WEEK);
    expect(await configure({ storage, fetch: unavailable }).getEntitlements()).toMatchObject({
      isPremium: true,
      stale: true,
    });
    Billing.reset();
    const err = await configure({ fetch: unavailable })
      .isPremium()
      .catch((e) => e);
    expect(err).toMatchObject({ code: 'network_unavailable', status: 503 });
  });

  it('with nothing cached it is a typed network_unavailable error', async () => {
    server.setOffline(true);
    const billing = configure();
    const err = await billing.isPremium().catch((e) => e);
    expect(err).toBeInstanceOf(BillingError);
    expect(err.code).toBe('network_unavailable');
  });

  it('a 4xx keeps the service code and status', async () => {
    const billing = configure({ appUserId: 'u1', backend: server.url + '/nowhere' });
    const err = await billing.isPremium().catch((e) => e);
    expect(err).toMatchObject({ code: 'service_error', status: 404, serviceCode: 'not_found' });
  });
});

describe('refresh discipline', () => {
  it('forced refreshes within the window coalesce into one request; after it, one more', async () => {
    const billing = configure({ refreshWindowMs: 10_000 });
    await billing.isPremium();
    await Promise.all([billing.refresh(), billing.refresh()]);
    for (let i = 0; i < 5; i++) {
      clock.advance(1000);
      await billing.refresh();
    }
    expect(server.subscriberRequests()).toHaveLength(1);
    clock.advance(5001);
    server.state.entitlements = [activeEntitlement];
    expect((await billing.refresh()).isPremium).toBe(true);
    expect(server.subscriberRequests()).toHaveLength(2);
  });

  it('a refresh after a web checkout asks the service, even inside the window', async () => {
    const opened: string[] = [];
    const billing = configure({ refreshWindowMs: 10_000, openCheckout: (url) => void opened.push(url) });
    expect(await billing.isPremium()).toBe(false);
    expect((await billing.checkout({ planId: 'premium_monthly', product: { kind: 'digital' } })).state).toBe('opened');
    expect(opened).toHaveLength(1);
    // A one-tap wallet: paid and the tab closed two seconds later, well inside the window.
    server.state.entitlements = [activeEntitlement];
    clock.advance(2000);
    expect((await billing.refresh()).isPremium).toBe(true);
    expect(server.subscriberRequests()).toHaveLength(2);
    // Only the first refresh after the checkout is forced: the next ones coalesce again.
    await billing.refresh();
    expect(server.subscriberRequests()).toHaveLength(2);
  });

  it('a refresh after a checkout does not join a request that started before it', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let calls = 0;
    const billing = configure({
      refreshWindowMs: 10_000,
      openCheckout: () => undefined,
      fetch: (async (u: any, i: any) => {
        // The first subscriber request is slow: it is still on its way when the checkout ends.
        if (String(u).includes('/subscribers/') && calls++ === 0) await held;
        return fetch(u, i);
      }) as typeof fetch,
    });
    const before = billing.getEntitlements();
    await until(
      'the first request reached the service',
      async () => calls,
      (n) => n >= 1,
    );
    await billing.checkout({ planId: 'premium_monthly', product: { kind: 'digital' } });
    server.state.entitlements = [activeEntitlement];
    const after = billing.refresh();
    expect((await after).isPremium).toBe(true);
    release();
    await before;
    expect(calls).toBe(2);
  });

  it('refresh after the window ignores an unexpired TTL', async () => {
    const billing = configure();
    await billing.isPremium();
    server.state.entitlements = [activeEntitlement];
    clock.advance(60_000);
    expect((await billing.refresh()).isPremium).toBe(true);
    expect(server.subscriberRequests()).toHaveLength(2);
  });
});

describe('configure once', () => {
  it('a second configure returns the same instance and warns about the re-render anti-pattern', async () => {
    const warnings: string[] = [];
    const first = configure({ warn: (m) => warnings.push(m) });
    const second = configure({ warn: (m) => warnings.push(m), appUserId: 'someone-else' });
    expect(second).toBe(first);
    expect(second.appUserId).toBe('u1');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/once at application start/);
    expect(warnings[0]).toMatch(/re-renders/);
    // Re-renders calling configure + isPremium still cost no request beyond the TTL.
    for (let i = 0; i < 20; i++) await configure({ warn: () => {} }).isPremium();
    expect(server.subscriberRequests()).toHaveLength(1);
  });

  it.each([
    [{ publishableKey: 'sk_test_secret' }, /publishableKey/],
    [{ publishableKey: '' }, /publishableKey/],
    [{ backend: 'not a url' }, /backend/],
    [{ appUserId: '  ' }, /appUserId/],
    [{ platform: 'windows' as any }, /platform/],
  ])('rejects %o with invalid_config', (bad, message) => {
    expect(() => configure(bad)).toThrow(message);
    try {
      configure(bad);
    } catch (e) {
      expect(e).toMatchObject({ code: 'invalid_config' });
    }
  });
});

describe('paywall', () => {
  it('is cached like the entitlements and stale offline', async () => {
    const billing = configure();
    expect((await billing.getPaywall()).paywall).toMatchObject({ title: 'Go premium' });
    await billing.getPaywall();
    expect(server.requests.filter((r) => r.path === '/v1/sdk/paywall')).toHaveLength(1);
    server.setOffline(true);
    clock.advance(WEEK);
    expect(await billing.getPaywall()).toMatchObject({ stale: true, paywall: { title: 'Go premium' } });
  });

  it('none published: a typed error with the service code', async () => {
    server.state.paywall = null;
    const err = await configure()
      .getPaywall()
      .catch((e) => e);
    expect(err).toMatchObject({ code: 'service_error', status: 404, serviceCode: 'not_found' });
  });
});
