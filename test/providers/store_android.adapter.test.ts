import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../emulators/common/host';
import { createEmulator } from '../../emulators/store_android/emulator';
import { ProviderRateLimitedError, ProviderRejectedError, ProviderUnreachableError } from '../../providers/errors';
import { createStoreAndroidAdapter } from '../../providers/store_android/adapter';
import type { ProductSpec, ProviderContext } from '../../providers/types';
import { getOrPostControlFor } from '../helpers/emulator-control';
import { productSpec } from '../helpers/product-spec';

type Creds = {
  account: string;
  credentials: Record<'test' | 'live', { service_account_json: string }>;
  webhook_secret: string;
};

let emu: RunningEmulator;
const adapter = createStoreAndroidAdapter();

const control = getOrPostControlFor(() => emu.url);

async function newAccount(): Promise<Creds> {
  return control('/accounts', { account: `com.example.t${crypto.randomBytes(4).toString('hex')}` });
}

/**
 * Behind a proxy the service account's token_uri moves with the base URL: a token endpoint on
 * another origin than the configured Play host is refused (docs/egress.md).
 */
function ctxFor(acct: Creds, mode: 'test' | 'live' = 'test', baseUrl = emu.url): ProviderContext {
  const sa = JSON.parse(acct.credentials[mode].service_account_json);
  const tokenUri = new URL(new URL(sa.token_uri).pathname, baseUrl).toString();
  return {
    baseUrl,
    mode,
    credential: { service_account_json: JSON.stringify({ ...sa, token_uri: tokenUri }) },
    accountRef: acct.account,
  };
}

const spec = (over: Partial<ProductSpec> = {}) => productSpec({ android_store_product_id: 'monthly', ...over });

type SubRow = { account: string; mode: string; productId: string; resource: Record<string, any> };
async function subscriptionsOf(acct: Creds): Promise<SubRow[]> {
  const state = await control('/state');
  return (state.subscriptions ?? []).filter((s: SubRow) => s.account === acct.account);
}

beforeAll(async () => {
  emu = await startEmulator(createEmulator, { port: 0 });
});
afterAll(async () => {
  await emu.close();
});
afterEach(async () => {
  await control('/faults', undefined, 'DELETE');
});

describe('store_android adapter: catalogue against the Play emulator', () => {
  it('creates the subscription with its base plan at Play ids and prices it per region in Money units', async () => {
    const acct = await newAccount();
    const ctx = ctxFor(acct);
    await adapter.checkReachable(ctx);
    const s = spec();
    const { external_id } = await adapter.upsertProduct(ctx, s, 'k1');
    expect(external_id).toBe('monthly');
    const [row] = await subscriptionsOf(acct);
    expect(row.mode).toBe('test');
    expect(row.resource.listings).toEqual([{ languageCode: 'en-US', title: 'Premium Monthly' }]);
    const bp = row.resource.basePlans[0];
    expect(bp).toMatchObject({
      basePlanId: 'monthly',
      state: 'DRAFT',
      autoRenewingBasePlanType: { billingPeriodDuration: 'P1M' },
    });
    expect(bp.regionalConfigs).toContainEqual({
      regionCode: 'US',
      newSubscriberAvailability: true,
      price: { currencyCode: 'USD', units: '9', nanos: 990_000_000 },
    });
    // JPY has no minor unit: 1200 minor units are 1200 yen.
    expect(bp.regionalConfigs).toContainEqual({
      regionCode: 'JP',
      newSubscriberAvailability: true,
      price: { currencyCode: 'JPY', units: '1200', nanos: 0 },
    });

    const priced = await adapter.upsertPrices(
      ctx,
      external_id,
      spec({
        prices: [
          { country: 'US', currency: 'USD', amount_minor: 1299 },
          { country: 'GB', currency: 'GBP', amount_minor: 999 },
        ],
      }),
      'k2',
    );
    expect(priced.priced_locales).toBe(2);
    expect(priced.price_ids).toEqual(['monthly/monthly/US', 'monthly/monthly/GB']);
    const [after] = await subscriptionsOf(acct);
    const configs = after.resource.basePlans[0].regionalConfigs;
    expect(configs.find((c: any) => c.regionCode === 'US').price).toEqual({
      currencyCode: 'USD',
      units: '12',
      nanos: 990_000_000,
    });
    // A region no longer wanted is closed to new subscribers, not deleted (Play keeps existing subscribers on it).
    expect(configs.find((c: any) => c.regionCode === 'DE')).toMatchObject({ newSubscriberAvailability: false });

    const plan = await adapter.ensurePaymentLink(ctx, external_id, s, 'app-1', 'k3');
    expect(plan).toEqual({ kind: 'plan', external_id: 'monthly/monthly' });
    expect((await subscriptionsOf(acct))[0].resource.basePlans[0].state).toBe('ACTIVE');

    const remote = await adapter.listRemoteProducts(ctx);
    expect(remote).toEqual([
      { external_id: 'monthly', sku: 'monthly', name: 'Premium Monthly', active: true, product_id: null },
    ]);
  });

  it('updates the listing of an existing subscription and adds nothing twice', async () => {
    const acct = await newAccount();
    const ctx = ctxFor(acct);
    await adapter.upsertProduct(ctx, spec(), 'k1');
    await adapter.upsertProduct(ctx, spec({ name: 'Premium (monthly)', version: 2 }), 'k2');
    const rows = await subscriptionsOf(acct);
    expect(rows).toHaveLength(1);
    expect(rows[0].resource.listings).toEqual([{ languageCode: 'en-US', title: 'Premium (monthly)' }]);
    expect(rows[0].resource.basePlans).toHaveLength(1);
  });

  it('refuses to change a base plan billing period, which Play keeps immutable', async () => {
    const acct = await newAccount();
    const ctx = ctxFor(acct);
    await adapter.upsertProduct(ctx, spec(), 'k1');
    await expect(adapter.upsertProduct(ctx, spec({ tier: 'annual' }), 'k2')).rejects.toThrow(/P1M, not P1Y/);
  });

  it('stops sales by deactivating every active base plan, and is a no-op when repeated', async () => {
    const acct = await newAccount();
    const ctx = ctxFor(acct);
    const { external_id } = await adapter.upsertProduct(ctx, spec(), 'k1');
    await adapter.ensurePaymentLink(ctx, external_id, spec(), 'app', 'k2');
    await adapter.stopSales(ctx, external_id, spec());
    expect((await subscriptionsOf(acct))[0].resource.basePlans[0].state).toBe('INACTIVE');
    await adapter.stopSales(ctx, external_id, spec());
    expect((await adapter.listRemoteProducts(ctx))[0].active).toBe(false);
    // Nothing at the store: nothing to stop.
    await adapter.stopSales(ctx, 'never_synced', spec());
  });

  it('retried and concurrent writes leave exactly one remote object', async () => {
    const acct = await newAccount();
    const ctx = ctxFor(acct);
    const s = spec();
    const results = await Promise.all([
      adapter.upsertProduct(ctx, s, 'same'),
      adapter.upsertProduct(ctx, s, 'same'),
      adapter.upsertProduct(ctx, s, 'same'),
    ]);
    expect(new Set(results.map((r) => r.external_id))).toEqual(new Set(['monthly']));
    await adapter.upsertProduct(ctx, s, 'same');
    await adapter.upsertPrices(ctx, 'monthly', s, 'p');
    await adapter.upsertPrices(ctx, 'monthly', s, 'p');
    await adapter.ensurePaymentLink(ctx, 'monthly', s, 'app', 'l');
    await adapter.ensurePaymentLink(ctx, 'monthly', s, 'app', 'l');
    const rows = await subscriptionsOf(acct);
    expect(rows).toHaveLength(1);
    expect(rows[0].resource.basePlans).toHaveLength(1);
    expect(rows[0].resource.basePlans[0].state).toBe('ACTIVE');
  });

  it('keeps test and live catalogues apart: a test credential never sees live objects', async () => {
    const acct = await newAccount();
    await adapter.upsertProduct(ctxFor(acct, 'live'), spec(), 'k1');
    expect(await adapter.listRemoteProducts(ctxFor(acct, 'test'))).toEqual([]);
    expect(await adapter.listRemoteProducts(ctxFor(acct, 'live'))).toHaveLength(1);
  });

  it('follows nextPageToken through every page of subscriptions', async () => {
    const acct = await newAccount();
    const ctx = ctxFor(acct);
    const ids = Array.from({ length: 105 }, (_, i) => `p${String(i).padStart(3, '0')}`);
    for (const id of ids)
      await adapter.upsertProduct(ctx, spec({ sku: id, android_store_product_id: id, name: id }), id);
    const remote = await adapter.listRemoteProducts(ctx);
    expect(remote.map((r) => r.external_id)).toEqual(ids);
  });

  it('derives valid Play ids from a SKU when no android_store_product_id is set', async () => {
    const acct = await newAccount();
    const ctx = ctxFor(acct);
    const { external_id } = await adapter.upsertProduct(
      ctx,
      spec({ sku: 'Pro-Annual 2024', android_store_product_id: null, tier: 'annual' }),
      'k',
    );
    expect(external_id).toBe('pro_annual_2024');
    const [row] = await subscriptionsOf(acct);
    expect(row.resource.basePlans[0]).toMatchObject({
      basePlanId: 'pro-annual-2024',
      autoRenewingBasePlanType: { billingPeriodDuration: 'P1Y' },
    });
  });
});

describe('store_android adapter: rejections carry Play’s reason', () => {
  it('a price in the wrong currency for its region is rejected by Play', async () => {
    const acct = await newAccount();
    const err = await adapter
      .upsertProduct(ctxFor(acct), spec({ prices: [{ country: 'DE', currency: 'USD', amount_minor: 999 }] }), 'k')
      .catch((e) => e);
    expect(err).toBeInstanceOf(ProviderRejectedError);
    expect(err.status).toBe(400);
    expect(err.reason).toMatch(/region DE must be in EUR/);
  });

  it('pricing or activating a product that was never synced is a 404 rejection', async () => {
    const acct = await newAccount();
    const e1 = await adapter.upsertPrices(ctxFor(acct), 'nothing', spec(), 'k').catch((e) => e);
    expect(e1).toBeInstanceOf(ProviderRejectedError);
    expect(e1.status).toBe(404);
    const e2 = await adapter.ensurePaymentLink(ctxFor(acct), 'nothing', spec(), 'app', 'k').catch((e) => e);
    expect(e2).toBeInstanceOf(ProviderRejectedError);
  });

  it('activating a base plan with no sellable region is refused (FAILED_PRECONDITION)', async () => {
    const acct = await newAccount();
    const ctx = ctxFor(acct);
    await adapter.upsertProduct(ctx, spec({ prices: [] }), 'k');
    const err = await adapter.ensurePaymentLink(ctx, 'monthly', spec({ prices: [] }), 'app', 'k').catch((e) => e);
    expect(err).toBeInstanceOf(ProviderRejectedError);
    expect(err.opts.code).toBe('FAILED_PRECONDITION');
  });

  it('a product without a billing tier is rejected before any call', async () => {
    const acct = await newAccount();
    await expect(adapter.upsertProduct(ctxFor(acct), spec({ tier: null }), 'k')).rejects.toBeInstanceOf(
      ProviderRejectedError,
    );
  });
});

describe('store_android adapter: service-account auth', () => {
  it('the emulator refuses API calls without, or with a forged, access token (Google error shape)', async () => {
    const acct = await newAccount();
    const url = `${emu.url}/androidpublisher/v3/applications/${acct.account}/subscriptions`;
    const none = await fetch(url);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer realm=/);
    const body = await none.json();
    expect(body.error).toMatchObject({ code: 401, status: 'UNAUTHENTICATED' });
    expect(body.error.errors[0]).toMatchObject({ domain: 'global' });
    const forged = await fetch(url, { headers: { authorization: 'Bearer ya29.eyJhIjoieCJ9.forged' } });
    expect(forged.status).toBe(401);
  });

  it('a service-account key the emulator does not know is refused at the token endpoint', async () => {
    const acct = await newAccount();
    const sa = JSON.parse(acct.credentials.test.service_account_json);
    sa.private_key = crypto
      .generateKeyPairSync('rsa', { modulusLength: 2048 })
      .privateKey.export({ type: 'pkcs8', format: 'pem' });
    const ctx = { ...ctxFor(acct), credential: { service_account_json: JSON.stringify(sa) } };
    const err = await adapter.checkReachable(ctx).catch((e) => e);
    expect(err).toBeInstanceOf(ProviderRejectedError);
    // Only the status and the standard OAuth code: a token endpoint's own words are never repeated (docs/egress.md).
    expect(err.reason).toBe('token endpoint refused the service account (HTTP 400, invalid_grant)');
    // The reason never carries the key.
    expect(err.message).not.toContain('PRIVATE KEY');
  });

  it('an unknown service account, a malformed credential and another app are all rejections', async () => {
    const acct = await newAccount();
    const other = await newAccount();
    const sa = JSON.parse(acct.credentials.test.service_account_json);
    const stranger = {
      ...ctxFor(acct),
      credential: {
        service_account_json: JSON.stringify({
          ...sa,
          client_email: 'nobody@x.iam.gserviceaccount.com',
          private_key_id: undefined,
        }),
      },
    };
    await expect(adapter.checkReachable(stranger)).rejects.toThrow(
      /token endpoint refused the service account \(HTTP 4\d\d/,
    );
    await expect(
      adapter.checkReachable({ ...ctxFor(acct), credential: { service_account_json: '{not json' } }),
    ).rejects.toBeInstanceOf(ProviderRejectedError);
    await expect(adapter.checkReachable({ ...ctxFor(acct), credential: {} })).rejects.toBeInstanceOf(
      ProviderRejectedError,
    );
    const crossed = await adapter.checkReachable({ ...ctxFor(acct), accountRef: other.account }).catch((e) => e);
    expect(crossed).toBeInstanceOf(ProviderRejectedError);
    expect(crossed.status).toBe(403);
  });

  it('an access token the server stops honouring is re-minted once instead of failing the call', async () => {
    const acct = await newAccount();
    const ctx = ctxFor(acct);
    await adapter.checkReachable(ctx);
    // Rotate the emulator's token-signing secret: every token it issued so far turns invalid (401).
    const keys = emu.store.list('keys');
    keys.splice(
      keys.findIndex((k) => k.id === 'access_token_hmac'),
      1,
    );
    await adapter.checkReachable(ctx);
  });

  it('access tokens from before an emulator restart stay valid, and state survives it', async () => {
    const file = `/tmp/store_android_state_${crypto.randomBytes(4).toString('hex')}.json`;
    const first = await startEmulator(createEmulator, { port: 0, stateFile: file });
    const port = first.port;
    const acct = (await (
      await fetch(`${first.url}/__control/accounts`, { method: 'POST', body: '{}' })
    ).json()) as Creds;
    const ctx = ctxFor(acct, 'test', first.url);
    await adapter.upsertProduct(ctx, spec(), 'k');
    await first.close();
    const second = await startEmulator(createEmulator, { port, stateFile: file });
    try {
      // The client's pooled connection died with the old process: that first failure is a
      // retryable one, and the retry (Temporal's job in production) gets through.
      const list = () => adapter.listRemoteProducts(ctx);
      const remote = await list().catch((e) => {
        if (e instanceof ProviderUnreachableError) return list();
        throw e;
      });
      expect(remote).toHaveLength(1);
    } finally {
      await second.close();
      fs.rmSync(file, { force: true });
    }
  });
});

/** Counts requests on their way to the emulator, to prove the client does not retry on its own. */
async function countingProxy(target: string) {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    const up = http.request(`${target}${req.url}`, { method: req.method, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  return { url, hits, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe('store_android adapter: no needless writes', () => {
  it('a second sync of an unchanged product writes nothing', async () => {
    const acct = await newAccount();
    const proxy = await countingProxy(emu.url);
    try {
      const ctx = ctxFor(acct, 'test', proxy.url);
      const s = spec();
      await adapter.upsertProduct(ctx, s, 'k');
      await adapter.upsertPrices(ctx, 'monthly', s, 'k');
      await adapter.ensurePaymentLink(ctx, 'monthly', s, 'app', 'k');
      proxy.hits.length = 0;
      await adapter.upsertProduct(ctx, s, 'k');
      await adapter.upsertPrices(ctx, 'monthly', s, 'k');
      await adapter.ensurePaymentLink(ctx, 'monthly', s, 'app', 'k');
      expect(proxy.hits.filter((h) => !h.startsWith('GET '))).toEqual([]);
    } finally {
      await proxy.close();
    }
  });
});

describe('store_android adapter: fault classes', () => {
  it('connection dropped → ProviderUnreachableError (API and token endpoint alike)', async () => {
    const acct = await newAccount();
    await adapter.checkReachable(ctxFor(acct, 'live'));
    await control('/faults', { mode: 'down', route: '/androidpublisher' });
    await expect(adapter.checkReachable(ctxFor(acct, 'live'))).rejects.toBeInstanceOf(ProviderUnreachableError);
    await control('/faults', undefined, 'DELETE');
    await control('/faults', { mode: 'down' });
    const fresh = await newAccount();
    const err = await adapter.checkReachable(ctxFor(fresh)).catch((e) => e);
    expect(err).toBeInstanceOf(ProviderUnreachableError);
    expect(err.retryable).toBe(true);
  });

  it('5xx → ProviderUnreachableError after exactly one request (the client does not retry)', async () => {
    const acct = await newAccount();
    const proxy = await countingProxy(emu.url);
    try {
      await control('/faults', { mode: 'error', status: 503, route: '/androidpublisher' });
      const err = await adapter.listRemoteProducts(ctxFor(acct, 'test', proxy.url)).catch((e) => e);
      expect(err).toBeInstanceOf(ProviderUnreachableError);
      expect(err.status).toBe(503);
      expect(proxy.hits.filter((h) => h.includes(' /androidpublisher'))).toHaveLength(1);
    } finally {
      await proxy.close();
    }
  });

  it('429 with Retry-After → ProviderRateLimitedError with retryAfterMs, one request', async () => {
    const acct = await newAccount();
    const proxy = await countingProxy(emu.url);
    try {
      await control('/faults', { mode: 'rate_limit', retry_after: 7, route: '/androidpublisher' });
      const err = await adapter.upsertProduct(ctxFor(acct, 'test', proxy.url), spec(), 'k').catch((e) => e);
      expect(err).toBeInstanceOf(ProviderRateLimitedError);
      expect(err.retryAfterMs).toBe(7000);
      expect(proxy.hits.filter((h) => h.includes(' /androidpublisher'))).toHaveLength(1);
    } finally {
      await proxy.close();
    }
  });

  it('a failing token endpoint is classified like the API: 5xx retryable, 429 rate limited', async () => {
    await control('/faults', { mode: 'error', status: 500, route: '/token' });
    await expect(adapter.checkReachable(ctxFor(await newAccount()))).rejects.toBeInstanceOf(ProviderUnreachableError);
    await control('/faults', undefined, 'DELETE');
    await control('/faults', { mode: 'rate_limit', retry_after: 3, route: '/token' });
    const err = await adapter.checkReachable(ctxFor(await newAccount())).catch((e) => e);
    expect(err).toBeInstanceOf(ProviderRateLimitedError);
    expect(err.retryAfterMs).toBe(3000);
  });

  it('other 4xx → ProviderRejectedError, not retryable', async () => {
    const acct = await newAccount();
    await control('/faults', { mode: 'error', status: 404, route: '/androidpublisher' });
    const err = await adapter.checkReachable(ctxFor(acct)).catch((e) => e);
    expect(err).toBeInstanceOf(ProviderRejectedError);
    expect(err.retryable).toBe(false);
  });

  it('a slow provider past ctx.timeoutMs → ProviderUnreachableError', async () => {
    const acct = await newAccount();
    await adapter.checkReachable({ ...ctxFor(acct), timeoutMs: 500 });
    await control('/faults', { mode: 'latency', ms: 800, route: '/androidpublisher' });
    await expect(adapter.checkReachable({ ...ctxFor(acct), timeoutMs: 500 })).rejects.toBeInstanceOf(
      ProviderUnreachableError,
    );
  });
});
