import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedDemoTenant } from '../../seed/demo';
import { DEMO_LOCALES, DEMO_PRODUCTS, demoSubscribers } from '../../seed/demo-data';
import { testDb } from '../helpers/db';
import { assertMatchesOpenApi, call, newTenant, refill, startApi } from '../helpers/api';

/** Every read endpoint: success, filters and errors — on both hosts, each response checked against OpenAPI. */
describe.each(['api host', 'dashboard host'] as const)('read endpoints on the %s', (host) => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let base: string;
  let t: Awaited<ReturnType<typeof newTenant>>;
  let bare: Awaited<ReturnType<typeof newTenant>>;
  const get = async (template: string, path: string, key = t.secret_key) => {
    const r = await call(base, path, key);
    assertMatchesOpenApi('GET', template, r);
    return r;
  };

  beforeAll(async () => {
    api = await startApi();
    base = host === 'api host' ? api.apiUrl : api.altUrl;
    t = await newTenant('reads');
    await seedDemoTenant(testDb(), t.tenant_id);
    bare = await newTenant('bare');
  });
  afterAll(async () => {
    await api.close();
  });

  it('GET /tenant: plan, subscriber limit, the key’s own scopes', async () => {
    const r = await get('/tenant', '/tenant');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      id: t.tenant_id,
      plan: 'free',
      subscriber_limit: 1000,
      subscriber_count: demoSubscribers().length,
    });
    expect(r.body.scopes).toContain('tenant:read');
    expect(r.body.key.scopes).toEqual(r.body.scopes);
  });

  it('GET /products: paged, newest first, provider ids, filters sku and type', async () => {
    const r = await get('/products', '/products');
    expect(r.status).toBe(200);
    expect(r.body.pagination).toEqual({ limit: 50, offset: 0, total: DEMO_PRODUCTS.length, has_more: false });
    expect(r.body.data[0]).toHaveProperty('provider_ids');
    const sku = await get('/products', '/products?sku=premium_annual');
    expect(sku.body.data.map((p: any) => p.sku)).toEqual(['premium_annual']);
    const none = await get('/products', '/products?type=one_time');
    expect(none.body).toMatchObject({ data: [], pagination: { total: 0, has_more: false } });
    const sub = await get('/products', '/products?type=subscription&limit=2&offset=1');
    expect(sub.body.pagination).toEqual({ limit: 2, offset: 1, total: DEMO_PRODUCTS.length, has_more: true });
  });

  it('paging: limit clamped into 1–200, offset past the end, bad numbers refused naming the parameter', async () => {
    expect((await get('/products', '/products?limit=0')).body.pagination.limit).toBe(1);
    expect((await get('/products', '/products?limit=5000')).body.pagination.limit).toBe(200);
    expect((await get('/products', '/products?limit=-3')).body.pagination.limit).toBe(1);
    const past = await get('/products', '/products?offset=100');
    expect(past.body).toMatchObject({ data: [], pagination: { total: DEMO_PRODUCTS.length, has_more: false } });
    const bad = await get('/products', '/products?limit=ten');
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: 'invalid_request' });
    expect(bad.body.detail).toContain('limit');
    const neg = await get('/products', '/products?offset=-1');
    expect(neg.status).toBe(400);
    expect(neg.body.detail).toContain('offset');
    const unknown = await get('/products', '/products?color=red');
    expect(unknown.status).toBe(400);
    expect(unknown.body.detail).toContain('color');
  });

  it('paging walks every row exactly once in a stable order', async () => {
    const seen: string[] = [];
    for (let offset = 0; ; offset += 2) {
      const r = await get('/products', `/products?limit=2&offset=${offset}`);
      seen.push(...r.body.data.map((p: any) => p.id));
      if (!r.body.pagination.has_more) break;
    }
    expect(seen).toHaveLength(DEMO_PRODUCTS.length);
    expect(new Set(seen).size).toBe(DEMO_PRODUCTS.length);
    const all = await get('/products', '/products');
    expect(all.body.data.map((p: any) => p.id)).toEqual(seen);
  });

  it('GET /products/{id}: product with per-currency pricing; 404 for unknown, malformed and foreign ids alike', async () => {
    const list = await get('/products', '/products?sku=premium_monthly');
    const id = list.body.data[0].id;
    const r = await get('/products/{id}', `/products/${id}`);
    expect(r.status).toBe(200);
    expect(r.body.sku).toBe('premium_monthly');
    expect(r.body.trial_per_platform).toEqual({ android: 7, ios: 7, web: 14 });
    expect(r.body.pricing).toHaveLength(DEMO_LOCALES.length);
    expect(r.body.pricing.find((p: any) => p.country === 'IN')).toMatchObject({
      currency: 'INR',
      amount_minor: 9900,
      locale: 'IN-INR',
    });

    const missing = await get('/products/{id}', `/products/${crypto.randomUUID()}`);
    const malformed = await get('/products/{id}', '/products/not-a-uuid');
    const foreign = await get('/products/{id}', `/products/${id}`, bare.secret_key);
    for (const x of [missing, malformed, foreign]) {
      expect(x.status).toBe(404);
      expect(x.body).toEqual({ error: 'not_found', detail: 'product not found' });
    }
  });

  it('GET /providers: paged, filter by provider, refuses an unknown provider', async () => {
    const r = await get('/providers', '/providers');
    expect(r.status).toBe(200);
    expect(r.body.pagination.total).toBe(r.body.data.length);
    const bad = await get('/providers', '/providers?provider=paypal');
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toContain('provider');
  });

  it('GET /subscribers: trial timestamps, filters email, status, provider and mode (live never gets test rows)', async () => {
    const all = await get('/subscribers', '/subscribers');
    expect(all.body.pagination.total).toBe(demoSubscribers().length);
    const live = await get('/subscribers', '/subscribers?mode=live');
    expect(live.body.data.length).toBeGreaterThan(0);
    expect(live.body.data.every((s: any) => s.mode === 'live')).toBe(true);
    const test = await get('/subscribers', '/subscribers?mode=test');
    expect(test.body.data.every((s: any) => s.mode === 'test')).toBe(true);
    expect(live.body.pagination.total + test.body.pagination.total).toBe(all.body.pagination.total);

    const alice = await get('/subscribers', '/subscribers?email=alice@example.com');
    expect(alice.body.data).toHaveLength(1);
    expect(alice.body.data[0].trialStartedAt).not.toBeNull();
    expect(alice.body.data[0].trialEndedAt).not.toBeNull();
    expect(alice.body.data[0].status).toBe('active');

    const refunded = await get('/subscribers', '/subscribers?status=refunded');
    expect(refunded.body.data.map((s: any) => s.email)).toEqual(['carol@example.com']);
    const ios = await get('/subscribers', '/subscribers?provider=store_ios&mode=live');
    expect(ios.body.data.map((s: any) => s.app_user_id)).toEqual(['user_dave']);
    for (const q of ['mode=sandbox', 'status=paused', 'provider=stripe']) {
      const bad = await get('/subscribers', `/subscribers?${q}`);
      expect(bad.status).toBe(400);
      expect(bad.body.detail).toContain(q.split('=')[0]);
    }
  });

  it('GET /entitlements: canonical state, filters app_user_id, provider, state', async () => {
    const r = await get('/entitlements', '/entitlements?app_user_id=user_carol');
    expect(r.body.data).toHaveLength(1);
    expect(r.body.data[0]).toMatchObject({ state: 'revoked', is_active: false, provider: 'psp_b' });
    const grace = await get('/entitlements', '/entitlements?state=grace_period');
    expect(grace.body.data.map((e: any) => e.app_user_id)).toEqual(['user_erin']);
    expect(grace.body.data[0].is_active).toBe(true);
    const android = await get('/entitlements', '/entitlements?provider=store_android');
    expect(android.body.data.every((e: any) => e.provider === 'store_android' && e.is_sandbox)).toBe(true);
    expect((await get('/entitlements', '/entitlements?state=premium')).status).toBe(400);
  });

  it('GET /coupons: counterparts per provider, filter by code', async () => {
    const r = await get('/coupons', '/coupons?code=WELCOME10');
    expect(r.body.data).toHaveLength(1);
    expect(r.body.data[0].counterparts.psp_c).toEqual({ kind: 'offer', external_id: 'offer_demo_welcome10' });
    expect(Object.keys(r.body.data[0].counterparts).sort()).toEqual(['psp_a', 'psp_c', 'store_android', 'store_ios']);
    expect((await get('/coupons', '/coupons')).body.pagination.total).toBe(2);
  });

  it('GET /paywall: the configuration; 404 when none is configured', async () => {
    const r = await get('/paywall', '/paywall');
    expect(r.status).toBe(200);
    expect(r.body.config.default_sku).toBe('premium_annual');
    const none = await get('/paywall', '/paywall', bare.secret_key);
    expect(none.status).toBe(404);
    expect(none.body.error).toBe('not_found');
  });

  it('GET /webhooks: status=failed lists dropped deliveries with the reason; filters', async () => {
    const failed = await get('/webhooks', '/webhooks?status=failed');
    expect(failed.body.data).toHaveLength(1);
    expect(failed.body.data[0]).toMatchObject({
      status: 'failed',
      reason: 'signature verification failed',
      provider: 'psp_a',
    });
    const byType = await get('/webhooks', '/webhooks?event_type=invoice.payment_succeeded&mode=live&provider=psp_a');
    expect(byType.body.data).toHaveLength(1);
    expect((await get('/webhooks', '/webhooks?status=lost')).status).toBe(400);
  });

  it('GET /audit: filters action and actor_type', async () => {
    const r = await get('/audit', '/audit?actor_type=system');
    expect(r.body.data.length).toBeGreaterThan(0);
    expect(r.body.data.every((a: any) => a.actor_type === 'system')).toBe(true);
    const none = await get('/audit', '/audit?action=nothing.like.this');
    expect(none.body.pagination.total).toBe(0);
  });

  it('GET /sync/events: refuses a malformed run_id, empty for an unknown run', async () => {
    const r = await get('/sync/events', `/sync/events?run_id=${crypto.randomUUID()}`);
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual([]);
    const bad = await get('/sync/events', '/sync/events?run_id=abc');
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toContain('run_id');
    await refill(t.tenant_id);
  });
});
