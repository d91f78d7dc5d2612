import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDb } from '../helpers/db';
import { call, newTenant, startApi } from '../helpers/api';

/** GET /v1/sdk/checkout and GET /v1/sdk/paywall: publishable keys, app and mode scoping, tenant isolation. */
describe('sdk checkout-link and paywall endpoints', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let a: Awaited<ReturnType<typeof newTenant>>;
  let b: Awaited<ReturnType<typeof newTenant>>;
  let aLive: string;
  let aProduct: string;
  const sdk = () => api.apiRoot + '/v1/sdk';

  async function product(tenantId: string, appId: string, sku: string) {
    const [p] = await testDb()('products')
      .insert({ tenant_id: tenantId, app_id: appId, sku, name: sku })
      .returning('id');
    return p.id as string;
  }
  async function link(tenantId: string, appId: string, productId: string, provider: string, mode: string, url: string) {
    await testDb()('payment_links').insert({
      tenant_id: tenantId,
      app_id: appId,
      product_id: productId,
      provider,
      mode,
      external_id: `plink_${Math.random().toString(36).slice(2)}`,
      url,
    });
  }

  beforeAll(async () => {
    api = await startApi();
    a = await newTenant('A');
    b = await newTenant('B');
    aLive = (await testDb()('apps').where({ id: a.app_id }).first('publishable_key_live')).publishable_key_live;
    aProduct = await product(a.tenant_id, a.app_id, 'premium_monthly');
    await link(a.tenant_id, a.app_id, aProduct, 'psp_b', 'test', 'https://b.example/test/a');
    await link(a.tenant_id, a.app_id, aProduct, 'psp_a', 'test', 'https://a.example/test/a');
    await link(a.tenant_id, a.app_id, aProduct, 'psp_a', 'live', 'https://a.example/live/a');
    // Tenant B has a product with the same sku and its own link.
    const bProduct = await product(b.tenant_id, b.app_id, 'premium_monthly');
    await link(b.tenant_id, b.app_id, bProduct, 'psp_a', 'test', 'https://a.example/test/b');
    const bOnly = await product(b.tenant_id, b.app_id, 'b_only');
    await link(b.tenant_id, b.app_id, bOnly, 'psp_a', 'test', 'https://a.example/test/b-only');
    await testDb()('paywalls').insert({
      tenant_id: a.tenant_id,
      config: JSON.stringify({ title: 'A paywall' }),
      published_at: new Date(),
    });
    await testDb()('paywalls').insert({
      tenant_id: b.tenant_id,
      config: JSON.stringify({ title: 'B draft' }),
      published_at: null,
    });
  });
  afterAll(async () => api.close());

  it('answers the app-scoped test link for pk_test, by sku or product id, psp_a first', async () => {
    const bySku = await call(sdk(), '/checkout?plan_id=premium_monthly', a.publishable_key);
    expect(bySku.status).toBe(200);
    expect(bySku.body).toEqual({
      object: 'checkout_link',
      plan_id: 'premium_monthly',
      product_id: aProduct,
      sku: 'premium_monthly',
      provider: 'psp_a',
      mode: 'test',
      url: 'https://a.example/test/a',
    });
    const byId = await call(sdk(), `/checkout?plan_id=${aProduct}`, a.publishable_key);
    expect(byId.body.url).toBe('https://a.example/test/a');
    const chosen = await call(sdk(), '/checkout?plan_id=premium_monthly&provider=psp_b', a.publishable_key);
    expect(chosen.body).toMatchObject({ provider: 'psp_b', url: 'https://b.example/test/a' });
  });

  it('pk_live sees the live link only; pk_test never the live one', async () => {
    const live = await call(sdk(), '/checkout?plan_id=premium_monthly', aLive);
    expect(live.body).toMatchObject({ mode: 'live', url: 'https://a.example/live/a' });
    const liveB = await call(sdk(), '/checkout?plan_id=premium_monthly&provider=psp_b', aLive);
    expect(liveB.status).toBe(404); // psp_b has a test link only
    expect(liveB.body).toMatchObject({ error: 'not_found', param: 'plan_id' });
  });

  it('cross-tenant: a key never reaches another tenant’s links, even with the same sku', async () => {
    const bSees = await call(sdk(), '/checkout?plan_id=premium_monthly', b.publishable_key);
    expect(bSees.body.url).toBe('https://a.example/test/b');
    const aAsksForB = await call(sdk(), '/checkout?plan_id=b_only', a.publishable_key);
    expect(aAsksForB.status).toBe(404);
    const bAsksForAId = await call(sdk(), `/checkout?plan_id=${aProduct}`, b.publishable_key);
    expect(bAsksForAId.status).toBe(404);
    expect(JSON.stringify(bAsksForAId.body)).not.toContain('a.example/test/a');
  });

  it('bad input is a 400 in the Error shape with the param', async () => {
    for (const q of ['', '?plan_id=', '?plan_id=%20%20', `?plan_id=${'x'.repeat(201)}`]) {
      const r = await call(sdk(), `/checkout${q}`, a.publishable_key);
      expect([q, r.status, r.body.error, r.body.param]).toEqual([q, 400, 'invalid_request', 'plan_id']);
    }
    for (const p of ['store_android', 'nope']) {
      const r = await call(sdk(), `/checkout?plan_id=premium_monthly&provider=${p}`, a.publishable_key);
      expect(r).toMatchObject({ status: 400, body: { error: 'invalid_request', param: 'provider' } });
    }
  });

  it('only publishable keys: a secret key, junk, a missing header and an unknown pk are the same 401', async () => {
    for (const key of [
      a.secret_key,
      'junk',
      undefined,
      'pk_test_' + 'Z'.repeat(32),
      a.publishable_key.replace('pk_test_', 'pk_live_'),
    ]) {
      for (const path of ['/checkout?plan_id=premium_monthly', '/paywall']) {
        const r = await call(sdk(), path, key);
        expect([path, r.status, r.body.error]).toEqual([path, 401, 'invalid_api_key']);
        expect(JSON.stringify(r.body)).not.toContain('https://');
      }
    }
  });

  it('paywall: the published one of the key’s tenant; an unpublished one is a 404', async () => {
    const pa = await call(sdk(), '/paywall', a.publishable_key);
    expect(pa).toMatchObject({ status: 200, body: { object: 'paywall', config: { title: 'A paywall' } } });
    const pb = await call(sdk(), '/paywall', b.publishable_key);
    expect(pb).toMatchObject({ status: 404, body: { error: 'not_found' } });
  });

  it('CORS: apps’ pages on other origins may call, preflight included', async () => {
    const pre = await fetch(sdk() + '/checkout?plan_id=x', {
      method: 'OPTIONS',
      headers: {
        Origin: 'http://app.example',
        'Access-Control-Request-Method': 'GET',
        'Access-Control-Request-Headers': 'authorization',
      },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('*');
    expect(pre.headers.get('access-control-allow-headers')).toMatch(/Authorization/);
    const r = await call(sdk(), '/checkout?plan_id=premium_monthly', a.publishable_key, {
      headers: { Origin: 'http://app.example' },
    });
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
  });
});
