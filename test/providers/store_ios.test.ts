import crypto from 'node:crypto';
import { SignJWT } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../emulators/common/host';
import { createEmulator } from '../../emulators/store_ios/emulator';
import { ProviderRateLimitedError, ProviderRejectedError, ProviderUnreachableError } from '../../providers/errors';
import { createStoreIosAdapter } from '../../providers/store_ios/adapter';
import type { ProductSpec, ProviderAdapter, ProviderContext } from '../../providers/types';
import { controlFor } from '../helpers/emulator-control';
import { productSpec } from '../helpers/product-spec';

interface Account {
  account: string;
  credentials: Record<'test' | 'live', Record<string, string>>;
  webhook_secret: string;
}

let emu: RunningEmulator;
let adapter: ProviderAdapter;
let acct: Account;
let ctx: ProviderContext;

const control = controlFor(() => emu.url, { strict: true });

const state = () => control<Record<string, Record<string, any>[]>>('GET', '/state');

const spec = (over: Partial<ProductSpec> = {}) =>
  productSpec({
    prices: [
      { country: 'US', currency: 'USD', amount_minor: 999 },
      { country: 'DE', currency: 'EUR', amount_minor: 999 },
      { country: 'JP', currency: 'JPY', amount_minor: 1200 },
    ],
    ...over,
  });

function ctxFor(a: Account, mode: 'test' | 'live' = 'test'): ProviderContext {
  return { baseUrl: emu.url, mode, credential: a.credentials[mode], accountRef: a.account, timeoutMs: 5000 };
}

beforeAll(async () => {
  emu = await startEmulator(createEmulator, { port: 0 });
  acct = await control<Account>('POST', '/accounts', { account: 'com.example.catalogue' });
  const root = await control<{ der_base64: string }>('GET', '/root-ca');
  adapter = createStoreIosAdapter({ trustedRoots: [root.der_base64] });
  ctx = ctxFor(acct);
});

afterAll(async () => {
  await emu?.close();
});

afterEach(async () => {
  await control('DELETE', '/faults');
});

describe('store_ios accounts', () => {
  it('creates an account with distinct ES256 keys per mode and returns the same one again', async () => {
    expect(acct.account).toBe('com.example.catalogue');
    expect(acct.webhook_secret).toBe('');
    for (const mode of ['test', 'live'] as const) {
      const c = acct.credentials[mode];
      expect(Object.keys(c).sort()).toEqual(['bundle_id', 'issuer_id', 'key_id', 'private_key']);
      expect(c.bundle_id).toBe('com.example.catalogue');
      expect(crypto.createPrivateKey(c.private_key).asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    }
    expect(acct.credentials.test.key_id).not.toBe(acct.credentials.live.key_id);
    const again = await control<Account>('POST', '/accounts', { account: 'com.example.catalogue' });
    expect(again.credentials.test.key_id).toBe(acct.credentials.test.key_id);
  });
});

describe('store_ios catalogue (App Store Connect)', () => {
  it('checkReachable finds the app by bundle id, and rejects a bundle id the key cannot see', async () => {
    await expect(adapter.checkReachable(ctx)).resolves.toBeUndefined();
    await expect(adapter.checkReachable({ ...ctx, accountRef: 'com.example.other' })).rejects.toBeInstanceOf(
      ProviderRejectedError,
    );
  });

  it('upsertProduct creates one subscription in one group and a retry finds it instead of creating another', async () => {
    const s = spec({ sku: 'idem_monthly' });
    const first = await adapter.upsertProduct(ctx, s, 'key-1');
    const retry = await adapter.upsertProduct(ctx, s, 'key-1');
    expect(retry.external_id).toBe(first.external_id);
    const st = await state();
    expect(st.subscriptions.filter((x) => x.productId === 'idem_monthly')).toHaveLength(1);
    expect(st.subscription_groups.filter((g) => g.account === acct.account)).toHaveLength(1);
    const sub = st.subscriptions.find((x) => x.id === first.external_id)!;
    expect(sub).toMatchObject({ name: 'Premium Monthly', subscriptionPeriod: 'ONE_MONTH', mode: 'test' });
    expect(sub.reviewNote).toContain(`product_id=${s.product_id}`);
  });

  it('a create that timed out and is retried leaves exactly one subscription', async () => {
    const s = spec({ sku: 'lost_response' });
    await adapter.upsertProduct(ctx, spec({ sku: 'group_seed' }), 'seed'); // the group exists already
    await control('POST', '/faults', { mode: 'latency', ms: 700, route: '/v1/subscriptions' });
    const err = await adapter.upsertProduct({ ...ctx, timeoutMs: 250 }, s, 'lost').catch((e) => e);
    expect(err).toBeInstanceOf(ProviderUnreachableError);
    await new Promise((r) => setTimeout(r, 900)); // let the held request run its course
    await control('DELETE', '/faults');
    const retry = await adapter.upsertProduct(ctx, s, 'lost');
    const subs = (await state()).subscriptions.filter((x) => x.productId === 'lost_response');
    expect(subs).toHaveLength(1);
    expect(subs[0].id).toBe(retry.external_id);
  });

  it('upsertProduct updates a changed name and period in place (PATCH), still one object', async () => {
    const s = spec({ sku: 'renamed', ios_store_product_id: 'com.example.renamed' });
    const { external_id } = await adapter.upsertProduct(ctx, s, 'k');
    await adapter.upsertProduct(ctx, { ...s, name: 'Premium Yearly', tier: 'annual', version: 2 }, 'k2');
    const subs = (await state()).subscriptions.filter((x) => x.productId === 'com.example.renamed');
    expect(subs).toHaveLength(1);
    expect(subs[0]).toMatchObject({ id: external_id, name: 'Premium Yearly', subscriptionPeriod: 'ONE_YEAR' });
  });

  it('listRemoteProducts follows links.next across pages and reads our product id back', async () => {
    const paged = createStoreIosAdapter({ pageSize: 1 });
    const specs = [
      spec({ sku: 'list_a' }),
      spec({ sku: 'list_b', tier: 'weekly' }),
      spec({ sku: 'list_c', tier: 'quarterly' }),
    ];
    for (const s of specs) await paged.upsertProduct(ctx, s, s.sku);
    const remote = await paged.listRemoteProducts(ctx);
    for (const s of specs) {
      expect(remote.find((r) => r.sku === s.sku)).toMatchObject({
        active: true,
        product_id: s.product_id,
        name: s.name,
      });
    }
    expect(new Set(remote.map((r) => r.external_id)).size).toBe(remote.length);
  });

  it('upsertPrices picks the exact price point per territory, is a no-op when retried, and makes it available there', async () => {
    const s = spec({ sku: 'priced' });
    const { external_id } = await adapter.upsertProduct(ctx, s, 'p');
    const first = await adapter.upsertPrices(ctx, external_id, s, 'p1');
    expect(first.priced_locales).toBe(3);
    expect(first.price_ids).toHaveLength(3);
    const retry = await adapter.upsertPrices(ctx, external_id, s, 'p1');
    expect(retry.price_ids.sort()).toEqual([...first.price_ids].sort());
    let st = await state();
    expect(st.subscription_prices.filter((p) => p.subscription_id === external_id)).toHaveLength(3);
    expect(st.subscription_availabilities.find((a) => a.subscription_id === external_id)!.territories.sort()).toEqual([
      'DEU',
      'JPN',
      'USA',
    ]);
    expect(st.subscriptions.find((x) => x.id === external_id)!.state).toBe('READY_TO_SUBMIT');

    // A price change adds today's price for that territory only; existing subscribers keep theirs.
    const changed = {
      ...s,
      version: 2,
      prices: [{ country: 'US', currency: 'USD', amount_minor: 1499 }, ...s.prices.slice(1)],
    };
    await adapter.upsertPrices(ctx, external_id, changed, 'p2');
    st = await state();
    const usa = st.subscription_prices.filter((p) => p.subscription_id === external_id && p.territory === 'USA');
    expect(usa).toHaveLength(2);
    expect(usa.find((p) => p.startDate !== null)).toMatchObject({ preserved: true });
  });

  it('upsertPrices rejects an amount that is not an App Store price point, and a currency the storefront does not sell in', async () => {
    const s = spec({ sku: 'badprice' });
    const { external_id } = await adapter.upsertProduct(ctx, s, 'b');
    const offLadder = { ...s, prices: [{ country: 'US', currency: 'USD', amount_minor: 1003 }] };
    await expect(adapter.upsertPrices(ctx, external_id, offLadder, 'b1')).rejects.toThrow(
      /not an App Store price point.*nearest/,
    );
    const wrongCurrency = { ...s, prices: [{ country: 'GB', currency: 'USD', amount_minor: 999 }] };
    await expect(adapter.upsertPrices(ctx, external_id, wrongCurrency, 'b2')).rejects.toThrow(/sells in GBP/);
    const noTerritory = { ...s, prices: [{ country: 'ZZ', currency: 'USD', amount_minor: 999 }] };
    await expect(adapter.upsertPrices(ctx, external_id, noTerritory, 'b3')).rejects.toBeInstanceOf(
      ProviderRejectedError,
    );
  });

  it('ensurePaymentLink answers the plan: the productId the app buys', async () => {
    const s = spec({ sku: 'plan_sku', ios_store_product_id: 'com.example.plan.monthly' });
    const { external_id } = await adapter.upsertProduct(ctx, s, 'pl');
    await expect(adapter.ensurePaymentLink(ctx, external_id, s, 'app_1', 'pl1')).resolves.toEqual({
      kind: 'plan',
      external_id: 'com.example.plan.monthly',
    });
  });

  it('stopSales removes the subscription from sale in every territory', async () => {
    const s = spec({ sku: 'retired' });
    const { external_id } = await adapter.upsertProduct(ctx, s, 'r');
    await adapter.upsertPrices(ctx, external_id, s, 'r1');
    await adapter.stopSales(ctx, external_id, s);
    await adapter.stopSales(ctx, external_id, s); // idempotent
    const st = await state();
    expect(st.subscriptions.find((x) => x.id === external_id)!.state).toBe('DEVELOPER_REMOVED_FROM_SALE');
    expect(st.subscription_availabilities.find((a) => a.subscription_id === external_id)!.territories).toEqual([]);
    const remote = await adapter.listRemoteProducts(ctx);
    expect(remote.find((r) => r.external_id === external_id)!.active).toBe(false);
  });

  it('a live key never sees test-mode catalogue objects', async () => {
    await adapter.upsertProduct(ctx, spec({ sku: 'test_only' }), 't');
    const live = await adapter.listRemoteProducts(ctxFor(acct, 'live'));
    expect(live.find((r) => r.sku === 'test_only')).toBeUndefined();
  });
});

describe('store_ios faults', () => {
  it('maps a dropped connection to unreachable, on both APIs', async () => {
    await control('POST', '/faults', { mode: 'down' });
    await expect(adapter.listRemoteProducts(ctx)).rejects.toBeInstanceOf(ProviderUnreachableError);
    await expect(adapter.fetchStorePurchase!(ctx, '2000000123456789')).rejects.toBeInstanceOf(ProviderUnreachableError);
  });

  it('maps 5xx to unreachable, on both APIs', async () => {
    await control('POST', '/faults', { mode: 'error', status: 503 });
    const connectErr = await adapter.checkReachable(ctx).catch((e) => e);
    expect(connectErr).toBeInstanceOf(ProviderUnreachableError);
    expect(connectErr.status).toBe(503);
    const serverErr = await adapter.fetchStorePurchase!(ctx, '2000000123456789').catch((e) => e);
    expect(serverErr).toBeInstanceOf(ProviderUnreachableError);
    expect(serverErr.retryable).toBe(true);
  });

  it('maps 429 to rate limited with the Retry-After delay, on both APIs', async () => {
    await control('POST', '/faults', { mode: 'rate_limit', retry_after: 7 });
    const connectErr = await adapter.upsertProduct(ctx, spec({ sku: 'limited' }), 'l').catch((e) => e);
    expect(connectErr).toBeInstanceOf(ProviderRateLimitedError);
    expect(connectErr.retryAfterMs).toBe(7000);
    const serverErr = await adapter.fetchStorePurchase!(ctx, '2000000123456789').catch((e) => e);
    expect(serverErr).toBeInstanceOf(ProviderRateLimitedError);
    expect(serverErr.retryAfterMs).toBe(7000);
  });

  it('a route-limited fault only hits that API', async () => {
    await control('POST', '/faults', { mode: 'error', status: 500, route: '/inApps/' });
    await expect(adapter.checkReachable(ctx)).resolves.toBeUndefined();
    await expect(adapter.fetchStorePurchase!(ctx, '2000000123456789')).rejects.toBeInstanceOf(ProviderUnreachableError);
  });

  it("maps a 4xx to rejected with Apple's reason (Connect error code; Server API errorCode)", async () => {
    const connectErr = await adapter.ensurePaymentLink(ctx, '9999999999', spec(), 'a', 'k').catch((e) => e);
    expect(connectErr).toBeInstanceOf(ProviderRejectedError);
    expect(connectErr.status).toBe(404);
    expect(connectErr.opts.code).toBe('NOT_FOUND');
    expect(connectErr.retryable).toBe(false);
    const serverErr = await adapter.fetchStorePurchase!(ctx, '2000000123456789').catch((e) => e);
    expect(serverErr).toBeInstanceOf(ProviderRejectedError);
    expect(serverErr.status).toBe(404);
    expect(serverErr.opts.code).toBe('4040010');
    expect(serverErr.reason).toMatch(/TRANSACTION_ID_NOT_FOUND/);
  });
});

describe('store_ios auth (ES256 JWT)', () => {
  const wrongKey = () =>
    crypto
      .generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
      .privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;

  it('rejects a token signed with a key other than the registered one, on both APIs', async () => {
    const bad = { ...ctx, credential: { ...ctx.credential, private_key: wrongKey() } };
    const connectErr = await adapter.checkReachable(bad).catch((e) => e);
    expect(connectErr).toBeInstanceOf(ProviderRejectedError);
    expect(connectErr.status).toBe(401);
    expect(connectErr.opts.code).toBe('NOT_AUTHORIZED');
    const serverErr = await adapter.fetchStorePurchase!(bad, '2000000123456789').catch((e) => e);
    expect(serverErr).toBeInstanceOf(ProviderRejectedError);
    expect(serverErr.status).toBe(401);
  });

  it('rejects a wrong issuer, a wrong audience and a Connect token living longer than 20 minutes', async () => {
    const c = acct.credentials.test;
    const key = crypto.createPrivateKey(c.private_key);
    const now = Math.floor(Date.now() / 1000);
    const token = (iss: string, aud: string, ttl: number) =>
      new SignJWT({})
        .setProtectedHeader({ alg: 'ES256', kid: c.key_id, typ: 'JWT' })
        .setIssuer(iss)
        .setIssuedAt(now)
        .setExpirationTime(now + ttl)
        .setAudience(aud)
        .sign(key);
    const call = async (t: string) =>
      (
        await fetch(`${emu.url}/v1/apps?filter[bundleId]=${acct.account}`, {
          headers: { authorization: `Bearer ${t}` },
        })
      ).status;
    expect(await call(await token(c.issuer_id, 'appstoreconnect-v1', 600))).toBe(200);
    expect(await call(await token(crypto.randomUUID(), 'appstoreconnect-v1', 600))).toBe(401);
    expect(await call(await token(c.issuer_id, 'someone-else', 600))).toBe(401);
    expect(await call(await token(c.issuer_id, 'appstoreconnect-v1', 3600))).toBe(401);
  });

  it('the Server API needs bid = the app bundle id', async () => {
    const other = { ...ctx, accountRef: 'com.example.not-mine' };
    const err = await adapter.fetchStorePurchase!(other, '2000000123456789').catch((e) => e);
    expect(err).toBeInstanceOf(ProviderRejectedError);
    expect(err.status).toBe(401);
  });

  it('never puts the private key in an error', async () => {
    const bad = { ...ctx, credential: { ...ctx.credential, private_key: 'not a key' } };
    const err = await adapter.checkReachable(bad).catch((e) => e);
    expect(err).toBeInstanceOf(ProviderRejectedError);
    expect(String(err.message)).not.toContain(ctx.credential.private_key.slice(40, 80));
  });
});
