import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Purchases, ErrorCode, type PurchasesError } from '@revenuecat/purchases-js';
import { testDb } from '../helpers/db';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { call, keyWith, newTenant, refill, startApi } from '../helpers/api';
import { billingCli } from '../helpers/billing-cli';
import { makeEntitlement, makeProduct } from '../helpers/factories';
import { withTenant } from '../../db/tenant-tx';
import { insertRevenueCatKey, revokeRevenueCatKey } from '../../db/revenuecat';
import { publishDraft, saveDraft } from '../../db/paywalls';
import { hashSecretKey } from '../../db/key-material';
import { ATTRIBUTE_LIMITS, RC_ERROR } from '../../domain/revenuecat';
import { stockPurchases } from '../helpers/revenuecat';

type Api = Awaited<ReturnType<typeof startApi>>;

/**
 * RevenueCat's client API under /revenuecat (docs/revenuecat-compatibility.md), driven by
 * RevenueCat's own web SDK, `@revenuecat/purchases-js` 1.63.1 unmodified from npm (it runs in
 * Node 20), with its `proxyURL` pointed here, and by plain requests in the shapes its sources
 * send. Access rows come from the factories (the same writes the webhook and store paths make).
 */
describe('RevenueCat-compatible client API', () => {
  let api: Api;
  let rc: string;
  let tenantId: string;
  let secretKey: string;
  let publishable: string;
  let webKey: string;
  let liveWebKey: string;
  let monthlyId: string;

  const mint = (tenant: string, platform: 'web' | 'ios' | 'android', mode: 'test' | 'live' = 'test') =>
    withTenant(testDb(), tenant, (trx) => insertRevenueCatKey(trx, { tenantId: tenant, platform, mode }));

  /** The stock SDK configured as an app would be, against this service. */
  const sdk = (key: string, appUserId: string) => stockPurchases(rc, key, appUserId);

  beforeAll(async () => {
    api = await startApi();
    rc = `${api.apiRoot}/revenuecat`;
    const t = await newTenant('rc');
    tenantId = t.tenant_id;
    secretKey = t.secret_key;
    publishable = t.publishable_key;
    webKey = (await mint(tenantId, 'web')).public_key;
    liveWebKey = (await mint(tenantId, 'web', 'live')).public_key;
    const monthly = await makeProduct(tenantId, {
      sku: 'pro_monthly',
      name: 'Pro monthly',
      tier: 'monthly',
      prices: [
        { country: 'US', currency: 'USD', amount: 999 },
        { country: 'DE', currency: 'EUR', amount: 899 },
      ],
    });
    monthlyId = monthly.id;
    await withTenant(testDb(), tenantId, async (trx) => {
      await trx('products').where({ id: monthly.id }).update({ entitlement: 'pro' });
      await makeProduct(
        tenantId,
        {
          sku: 'pro_annual',
          name: 'Pro annual',
          tier: 'annual',
          prices: [{ country: 'US', currency: 'USD', amount: 7999 }],
        },
        trx,
      );
      await saveDraft(trx, tenantId, { title: 'Go Pro', skus: ['pro_monthly', 'pro_annual'] });
      await publishDraft(trx);
    });
  });
  afterAll(async () => {
    await api?.close();
  });

  it('keys are stored hashed, one app and mode each; the web SDK accepts the sandbox format', async () => {
    expect(webKey).toMatch(/^rcb_sb_[0-9A-Za-z]{32}$/);
    expect(liveWebKey).toMatch(/^rcb_[0-9A-Za-z]{32}$/);
    expect((await mint(tenantId, 'ios')).public_key).toMatch(/^appl_/);
    expect((await mint(tenantId, 'android')).public_key).toMatch(/^goog_/);
    const rows = await testDb()('revenuecat_keys').where({ tenant_id: tenantId });
    expect(rows.find((r) => r.key_hash === hashSecretKey(webKey))).toMatchObject({ platform: 'web', mode: 'test' });
    expect(JSON.stringify(rows)).not.toContain(webKey);
    expect(sdk(webKey, 'probe').isSandbox()).toBe(true);
  });

  it('a secret key, a publishable key, a made-up or revoked key: 401 in RevenueCat’s error shape', async () => {
    const revoked = await mint(tenantId, 'web');
    await withTenant(testDb(), tenantId, (trx) => revokeRevenueCatKey(trx, revoked.key_id));
    for (const key of [secretKey, publishable, 'rcb_sb_' + 'x'.repeat(32), revoked.public_key, undefined]) {
      const r = await call(rc, '/v1/subscribers/u1', key);
      expect(r.status, String(key)).toBe(401);
      expect(r.body).toEqual({ code: RC_ERROR.invalidApiKey, message: expect.any(String) });
    }
    // Unknown paths: the key first, then 404 (still RevenueCat's shape).
    expect((await call(rc, '/v1/product_entitlement_mapping', secretKey)).status).toBe(401);
    const missing = await call(rc, '/v1/product_entitlement_mapping', webKey);
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ code: expect.any(Number), message: expect.any(String) });
    // The SDK maps 7225 to its own invalid-credentials error.
    const err = await sdk(secretKey.replace(/^sk_/, 'rcb_sb_'), 'u1')
      .getCustomerInfo()
      .catch((e: PurchasesError) => e);
    expect((err as PurchasesError).errorCode).toBe(ErrorCode.InvalidCredentialsError);
  });

  it('getCustomerInfo: the entitlement named by the product is active with our expiry; gone once it ends', async () => {
    const user = `buyer_${Date.now()}`;
    const purchases = sdk(webKey, user);
    expect(Object.keys((await purchases.getCustomerInfo()).entitlements.active)).toEqual([]);

    const expiresAt = new Date(Date.now() + 30 * 86_400_000);
    expiresAt.setMilliseconds(0);
    const ent = await makeEntitlement(tenantId, {
      appUserId: user,
      provider: 'psp_a',
      productId: monthlyId,
      expiresAt: expiresAt.toISOString(),
    });
    // The SDK caches customer info for a while; a fresh instance reads again.
    const info = await sdk(webKey, user).getCustomerInfo();
    expect(Object.keys(info.entitlements.active)).toEqual(['pro']);
    expect(info.entitlements.active.pro).toMatchObject({
      isActive: true,
      productIdentifier: 'pro_monthly',
      store: 'stripe',
      isSandbox: true,
    });
    expect(info.entitlements.active.pro.expirationDate?.toISOString()).toBe(expiresAt.toISOString());
    expect(info.originalAppUserId).toBe(user);
    expect([...info.activeSubscriptions]).toEqual(['pro_monthly']);

    // The same rule as /v1/sdk: a revoked entitlement is not premium there, and not active here.
    await testDb()('entitlements').where({ id: ent!.id }).update({ state: 'revoked', updated_at: new Date() });
    const sdkView = await call(`${api.apiRoot}/v1/sdk`, `/subscribers/${user}`, publishable);
    expect(sdkView.body.is_premium).toBe(false);
    const after = await sdk(webKey, user).getCustomerInfo();
    expect(Object.keys(after.entitlements.active)).toEqual([]);
    expect(Object.keys(after.entitlements.all)).toEqual(['pro']);
  });

  it('a product’s entitlement is set through the API and is the identifier the SDK sees', async () => {
    const made = await call(api.apiUrl, '/products', secretKey, {
      method: 'POST',
      body: JSON.stringify({ sku: 'gold_monthly', tier: 'monthly', entitlement: 'gold' }),
    });
    expect(made.status).toBe(200);
    expect(made.body.entitlement).toBe('gold');
    const bad = await call(api.apiUrl, '/products', secretKey, {
      method: 'POST',
      body: JSON.stringify({ sku: 'bad_ent', entitlement: 'has spaces' }),
    });
    expect(bad.status).toBe(400);
    const plain = await call(api.apiUrl, '/products', secretKey, {
      method: 'POST',
      body: JSON.stringify({ sku: 'plain_monthly', tier: 'monthly' }),
    });
    expect(plain.body.entitlement).toBe('premium');
    const user = `gold_${Date.now()}`;
    await makeEntitlement(tenantId, { appUserId: user, provider: 'psp_a', productId: made.body.id });
    const info = await sdk(webKey, user).getCustomerInfo();
    expect(Object.keys(info.entitlements.active)).toEqual(['gold']);
    expect(info.entitlements.active.gold.productIdentifier).toBe('gold_monthly');
    // Our own SDK's answer names the same identifier, from the same rows; a product naming none is premium.
    const plainUser = `plain_${Date.now()}`;
    await makeEntitlement(tenantId, { appUserId: plainUser, provider: 'psp_a', productId: plain.body.id });
    const ours = await call(api.apiRoot, `/v1/sdk/subscribers/${user}`, publishable);
    expect(ours.body.entitlements.map((e: any) => [e.identifier, e.is_active, e.sku])).toEqual([
      ['gold', true, 'gold_monthly'],
    ]);
    const plainOurs = await call(api.apiRoot, `/v1/sdk/subscribers/${plainUser}`, publishable);
    expect(plainOurs.body.entitlements.map((e: any) => e.identifier)).toEqual(['premium']);
    expect(Object.keys((await sdk(webKey, plainUser).getCustomerInfo()).entitlements.active)).toEqual(['premium']);
  });

  it('access whose product names no entitlement is `premium`; grace keeps it active, with its billing issue', async () => {
    const user = `grace_${Date.now()}`;
    const past = new Date(Date.now() - 86_400_000).toISOString();
    const graceUntil = new Date(Date.now() + 3 * 86_400_000);
    await makeEntitlement(tenantId, {
      appUserId: user,
      provider: 'psp_a',
      state: 'grace_period',
      expiresAt: past,
      graceUntil: graceUntil.toISOString(),
    });
    const r = await call(rc, `/v1/subscribers/${user}`, webKey);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['request_date', 'request_date_ms', 'subscriber']);
    expect(Object.keys(r.body.subscriber).sort()).toEqual(
      [
        'entitlements',
        'first_seen',
        'last_seen',
        'management_url',
        'non_subscriptions',
        'original_app_user_id',
        'original_application_version',
        'original_purchase_date',
        'other_purchases',
        'subscriptions',
      ].sort(),
    );
    expect(r.body.subscriber.entitlements.premium).toMatchObject({
      expires_date: graceUntil.toISOString(),
      grace_period_expires_date: graceUntil.toISOString(),
    });
    const info = await sdk(webKey, user).getCustomerInfo();
    expect(info.entitlements.active.premium?.billingIssueDetectedAt).not.toBeNull();
  });

  it('mode: a test key never sees live access, a live key never sees sandbox access', async () => {
    const user = `modes_${Date.now()}`;
    await makeEntitlement(tenantId, { appUserId: user, provider: 'psp_a', productId: monthlyId, isSandbox: false });
    expect(Object.keys((await sdk(webKey, user).getCustomerInfo()).entitlements.all)).toEqual([]);
    const live = await call(rc, `/v1/subscribers/${user}`, liveWebKey);
    expect(live.body.subscriber.entitlements.pro).toBeDefined();
    expect(live.body.subscriber.subscriptions.pro_monthly.is_sandbox).toBe(false);
    // X-Is-Sandbox is read by nobody: a live key saying "sandbox" still reads live.
    const lying = await call(rc, `/v1/subscribers/${user}`, liveWebKey, { headers: { 'X-Is-Sandbox': 'true' } });
    expect(lying.body.subscriber.subscriptions.pro_monthly.is_sandbox).toBe(false);
  });

  it('cross-tenant: a key of tenant B never reads tenant A’s subscriber, offerings or products', async () => {
    const user = `shared_${Date.now()}`;
    await makeEntitlement(tenantId, { appUserId: user, provider: 'psp_a', productId: monthlyId });
    const b = await newTenant('rc-b');
    const bKey = (await mint(b.tenant_id, 'web')).public_key;
    const info = await call(rc, `/v1/subscribers/${user}`, bKey);
    expect(info.status).toBe(200);
    expect(info.body.subscriber.entitlements).toEqual({});
    expect(info.body.subscriber.subscriptions).toEqual({});
    expect((await call(rc, `/v1/subscribers/${user}/offerings`, bKey)).body).toEqual({
      current_offering_id: null,
      offerings: [],
    });
    expect((await call(rc, `/rcbilling/v1/subscribers/${user}/products?id=pro_monthly`, bKey)).body).toEqual({
      product_details: [],
    });
    // A's attributes are not B's to write into: B's write lands in B's tenant only.
    await call(rc, `/v1/subscribers/${user}/attributes`, bKey, {
      method: 'POST',
      body: JSON.stringify({ attributes: { $email: { value: 'b@example.test', updated_at_ms: 1 } } }),
    });
    expect(await testDb()('subscriber_attributes').where({ tenant_id: tenantId, app_user_id: user })).toEqual([]);
  });

  it('getOfferings: the published paywall’s packages with our prices, per currency', async () => {
    const offerings = await sdk(webKey, `shopper_${Date.now()}`).getOfferings();
    expect(offerings.current?.identifier).toBe('default');
    const pkgs = offerings.current!.availablePackages.map((p) => [
      p.identifier,
      p.webBillingProduct.identifier,
      p.webBillingProduct.price.amountMicros,
      p.webBillingProduct.price.currency,
      p.webBillingProduct.normalPeriodDuration,
    ]);
    expect(pkgs).toEqual([
      ['$rc_monthly', 'pro_monthly', 9_990_000, 'USD', 'P1M'],
      ['$rc_annual', 'pro_annual', 79_990_000, 'USD', 'P1Y'],
    ]);
    expect(offerings.current!.monthly?.webBillingProduct.title).toBe('Pro monthly');
    const eur = await sdk(webKey, `shopper_eur_${Date.now()}`).getOfferings({ currency: 'EUR' });
    // Only the monthly product has a euro price.
    expect(eur.current!.availablePackages.map((p) => [p.identifier, p.webBillingProduct.price.amountMicros])).toEqual([
      ['$rc_monthly', 8_990_000],
    ]);
  });

  it('identifyUser from an anonymous id: an alias, the anonymous purchases belong to the identified user', async () => {
    const anon = Purchases.generateRevenueCatAnonymousAppUserId();
    await makeEntitlement(tenantId, { appUserId: anon, provider: 'psp_a', productId: monthlyId });
    const purchases = sdk(webKey, anon);
    expect(Object.keys((await purchases.getCustomerInfo()).entitlements.active)).toEqual(['pro']);
    const identified = `person_${Date.now()}`;
    const result = await purchases.identifyUser(identified);
    expect(purchases.getAppUserId()).toBe(identified);
    expect(Object.keys(result.customerInfo.entitlements.active)).toEqual(['pro']);
    const again = await sdk(webKey, identified).getCustomerInfo();
    expect(Object.keys(again.entitlements.active)).toEqual(['pro']);

    // Between two identified ids: 200, nothing merged.
    const other = `other_${Date.now()}`;
    const r = await call(rc, '/v1/subscribers/identify', webKey, {
      method: 'POST',
      body: JSON.stringify({ app_user_id: identified, new_app_user_id: other }),
    });
    expect([200, 201]).toContain(r.status);
    expect(r.body.subscriber.entitlements).toEqual({});
    const known = await call(rc, '/v1/subscribers/identify', webKey, {
      method: 'POST',
      body: JSON.stringify({ app_user_id: other, new_app_user_id: identified }),
    });
    expect(known.status).toBe(200);
    expect(Object.keys((await sdk(webKey, other).getCustomerInfo()).entitlements.all)).toEqual([]);
  });

  it('attributes: stored, shown on the customer view, never access; bounded in count and size', async () => {
    const user = `attrs_${Date.now()}`;
    const purchases = sdk(webKey, user);
    await purchases.setAttributes({ $email: 'someone@example.test', favourite: 'blue' });
    const view = await call(api.apiUrl, `/customers/${encodeURIComponent(user)}`, secretKey);
    expect(view.status).toBe(200);
    expect(view.body.attributes).toEqual([
      { name: '$email', value: 'someone@example.test', updated_at: expect.any(String) },
      { name: 'favourite', value: 'blue', updated_at: expect.any(String) },
    ]);
    expect(Object.keys((await purchases.getCustomerInfo()).entitlements.all)).toEqual([]);

    const post = (attributes: Record<string, unknown>) =>
      call(rc, `/v1/subscribers/${user}/attributes`, webKey, { method: 'POST', body: JSON.stringify({ attributes }) });
    const long = await post({ note: { value: 'x'.repeat(ATTRIBUTE_LIMITS.valueLength + 1), updated_at_ms: 1 } });
    expect(long.status).toBe(400);
    expect(long.body.code).toBe(RC_ERROR.invalidSubscriberAttributesBody);
    const many = Object.fromEntries(
      Array.from({ length: ATTRIBUTE_LIMITS.perUser }, (_, i) => [`k${i}`, { value: 'v', updated_at_ms: 1 }]),
    );
    const over = await post(many);
    expect(over.status).toBe(400);
    expect(over.body.code).toBe(RC_ERROR.invalidSubscriberAttributes);
    // Nothing half-written: the user still has the two.
    expect(await testDb()('subscriber_attributes').where({ tenant_id: tenantId, app_user_id: user })).toHaveLength(2);
    // A null value removes; an older write loses to a newer one.
    expect((await post({ favourite: { value: null, updated_at_ms: Date.now() + 1000 } })).status).toBe(200);
    expect((await post({ $email: { value: 'old@example.test', updated_at_ms: 1 } })).status).toBe(200);
    const after = await testDb()('subscriber_attributes').where({ tenant_id: tenantId, app_user_id: user });
    expect(after.map((a) => [a.name, a.value])).toEqual([['$email', 'someone@example.test']]);
  });

  it('the client limits of /v1/sdk apply: one app user’s loop is refused with RevenueCat’s 7114', async () => {
    await refill(tenantId);
    let last;
    for (let i = 0; i < 70; i++) {
      last = await call(rc, '/v1/subscribers/looper', webKey);
      if (last.status === 429) break;
    }
    expect(last!.status).toBe(429);
    expect(last!.body.code).toBe(RC_ERROR.tooManyRequests);
    expect(last!.headers.get('retry-after')).toBeTruthy();
    await refill(tenantId);
  });

  it('a browser may call it from an app’s own origin with the headers the web SDK sends', async () => {
    const pre = await fetch(`${rc}/v1/subscribers/u1`, {
      method: 'OPTIONS',
      headers: {
        Origin: 'https://app.example',
        'Access-Control-Request-Method': 'GET',
        'Access-Control-Request-Headers': 'authorization,x-platform,x-is-sandbox,x-version',
      },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('*');
    const allowed = pre.headers.get('access-control-allow-headers')!.toLowerCase();
    for (const h of ['authorization', 'x-platform', 'x-is-sandbox', 'x-version']) expect(allowed).toContain(h);
  });

  it('bad input is a 4xx in RevenueCat’s shape, never a 5xx', async () => {
    const bad = [
      ['/v1/subscribers/identify', { app_user_id: '', new_app_user_id: 'x' }],
      ['/v1/subscribers/identify', { app_user_id: 'a\u0000', new_app_user_id: 'x' }],
      ['/v1/receipts', { app_user_id: 'u', fetch_token: 'tok' }],
      ['/v1/subscribers/u/attributes', { attributes: [] }],
    ] as const;
    for (const [path, body] of bad) {
      const r = await call(rc, path, webKey, { method: 'POST', body: JSON.stringify(body) });
      expect(r.status, path).toBeGreaterThanOrEqual(400);
      expect(r.status, path).toBeLessThan(500);
      expect(r.body).toEqual({ code: expect.any(Number), message: expect.any(String) });
    }
    const notJson = await call(rc, '/v1/receipts', webKey, { method: 'POST', body: '{' });
    expect(notJson.status).toBe(400);
    const products = await call(rc, '/rcbilling/v1/subscribers/u/products?currency=EURO', webKey);
    expect(products.status).toBe(400);
    expect((await call(rc, '/v1/subscribers/' + 'x'.repeat(201), webKey)).body.code).toBe(RC_ERROR.emptyAppUserId);
  });

  it('billing revenuecat:compare prints where RevenueCat’s customers and ours differ, from RevenueCat’s export and our API', async () => {
    // A tenant of its own, so the comparison sees only these customers.
    const t = await newTenant('rc-compare');
    const pro = await makeProduct(t.tenant_id, { sku: 'pro_m' });
    await withTenant(testDb(), t.tenant_id, (trx) =>
      trx('products').where({ id: pro.id }).update({ entitlement: 'pro' }),
    );
    const plain = await makeProduct(t.tenant_id, { sku: 'plain_m' });
    const day = 86_400_000;
    const at = (days: number) => new Date(Date.now() + days * day).toISOString();
    const e1 = at(30);
    const e2 = at(10);
    await makeEntitlement(t.tenant_id, { appUserId: 'same', provider: 'psp_a', productId: pro.id, expiresAt: e1 });
    await makeEntitlement(t.tenant_id, { appUserId: 'later', provider: 'psp_a', productId: plain.id, expiresAt: e2 });
    await makeEntitlement(t.tenant_id, {
      appUserId: 'only-here',
      provider: 'psp_a',
      productId: plain.id,
      expiresAt: e2,
    });
    const csv = [
      'app_user_id,active_entitlements,expires_date,is_sandbox',
      `same,pro,${e1},true`,
      `later,premium,${at(12)},true`,
      `only-rc,gold,${at(5)},true`,
      `gone,pro,${at(-1)},true`,
      `live-one,pro,${at(5)},false`,
    ].join('\n');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc-compare-'));
    fs.writeFileSync(path.join(dir, 'customers.csv'), csv);
    const key = await keyWith(t.tenant_id, ['subscribers:read', 'products:read']);
    const billing = (args: string[]) =>
      billingCli(['revenuecat:compare', ...args], {
        cwd: dir,
        env: { ...process.env, BILLING_API_URL: api.apiUrl, BILLING_SECRET_KEY: key.secret_key },
      });
    const [text, asJson, live, bad] = await Promise.all([
      billing(['--file', 'customers.csv', '--sandbox']),
      billing(['--file', 'customers.csv', '--sandbox', '--json']),
      billing(['--file', 'customers.csv']),
      billing(['--file', 'missing.csv']),
    ]);
    expect(text.code, text.stderr).toBe(2);
    expect(text.stdout.trim().split('\n')).toEqual([
      expect.stringMatching(/^~ later premium: ends .+ on RevenueCat, .+ here$/),
      expect.stringMatching(/^\+ only-here premium: active here until .+, not on RevenueCat$/),
      expect.stringMatching(/^- only-rc gold: active on RevenueCat until .+, not here$/),
      'Compared 4 app users (sandbox): 1 agree, 3 differ.',
    ]);
    const body = JSON.parse(asJson.stdout);
    expect(body).toMatchObject({ users: 4, agreeing: 1 });
    expect(body.differences.find((d: any) => d.app_user_id === 'later')).toEqual({
      app_user_id: 'later',
      entitlement: 'premium',
      kind: 'expiry_differs',
      revenuecat: new Date(Date.parse(csv.split('\n')[2].split(',')[2])).toISOString(),
      here: new Date(Date.parse(e2)).toISOString(),
    });
    // Live: our access here is all sandbox, so RevenueCat's one live customer is the one difference.
    expect(live.code).toBe(2);
    expect(live.stdout).toContain('- live-one pro: active on RevenueCat until');
    expect(live.stdout).toContain('Compared 1 app users (live): 0 agree, 1 differ.');
    expect([bad.code, bad.stderr]).toEqual([
      1,
      expect.stringContaining('error: invalid_file: missing.csv: no such file'),
    ]);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
