import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../emulators/common/host';
import { createEmulator } from '../../emulators/store_android/emulator';
import { ProviderRejectedError } from '../../providers/errors';
import { createStoreAndroidAdapter } from '../../providers/store_android/adapter';
import type { ProviderContext } from '../../providers/types';
import { getOrPostControlFor } from '../helpers/emulator-control';

type Creds = {
  account: string;
  credentials: Record<'test' | 'live', { service_account_json: string }>;
  webhook_secret: string;
};

let emu: RunningEmulator;
let acct: Creds;
const adapter = createStoreAndroidAdapter();

const control = getOrPostControlFor(() => emu.url);

const ctx = (mode: 'test' | 'live' = 'test'): ProviderContext => ({
  baseUrl: emu.url,
  mode,
  credential: acct.credentials[mode],
  accountRef: acct.account,
});

/** Event delivery target that accepts everything: these tests look at the purchase, not the push. */
const sink = 'http://127.0.0.1:9/unused';

beforeAll(async () => {
  emu = await startEmulator(createEmulator, { port: 0 });
  acct = await control('/accounts', { account: `com.example.p${crypto.randomBytes(4).toString('hex')}` });
  // A synced, active product, as a license tester would find it in the store.
  await adapter.upsertProduct(
    ctx('test'),
    {
      product_id: crypto.randomUUID(),
      tenant_id: crypto.randomUUID(),
      sku: 'premium_annual',
      name: 'Premium Annual',
      type: 'subscription',
      tier: 'annual',
      version: 1,
      android_store_product_id: 'annual',
      prices: [{ country: 'US', currency: 'USD', amount_minor: 4999 }],
    },
    'k',
  );
});
afterAll(async () => {
  await emu.close();
});

describe('store_android: purchases.subscriptionsv2 through the adapter', () => {
  it('a sandbox purchase comes back as is_sandbox with the app user id, product and expiry', async () => {
    const { purchase_token } = await control('/sandbox-purchase', { product_id: 'annual', app_user_id: 'user-42' });
    expect(typeof purchase_token).toBe('string');
    const p = await adapter.fetchStorePurchase!(ctx('test'), purchase_token);
    expect(p).toMatchObject({
      provider: 'store_android',
      purchase_id: purchase_token,
      store_product_id: 'annual',
      app_user_id: 'user-42',
      is_sandbox: true,
      state: 'active',
      acknowledged: false,
      // subscriptionsv2 regionCode: the buyer's country.
      country: 'US',
    });
    // License testers renew on an accelerated clock: a year lasts 30 minutes.
    const left = Date.parse(p.expires_at!) - Date.now();
    expect(left).toBeGreaterThan(25 * 60_000);
    expect(left).toBeLessThanOrEqual(30 * 60_000);
    expect(p.raw).toMatchObject({
      kind: 'androidpublisher#subscriptionPurchaseV2',
      subscriptionState: 'SUBSCRIPTION_STATE_ACTIVE',
      testPurchase: {},
      lineItems: [
        {
          productId: 'annual',
          offerDetails: { basePlanId: 'annual' },
          autoRenewingPlan: { recurringPrice: { currencyCode: 'USD', units: '49' } },
        },
      ],
    });
    // The production service account sees license-tester purchases too, as on Play.
    expect((await adapter.fetchStorePurchase!(ctx('live'), purchase_token)).is_sandbox).toBe(true);
  });

  it('a live purchase is not sandbox, and a test credential cannot read it', async () => {
    const { purchase_token } = await control('/purchases', { product_id: 'annual', app_user_id: 'user-7' });
    const p = await adapter.fetchStorePurchase!(ctx('live'), purchase_token);
    expect(p.is_sandbox).toBe(false);
    expect(p.raw).not.toHaveProperty('testPurchase');
    const err = await adapter.fetchStorePurchase!(ctx('test'), purchase_token).catch((e) => e);
    expect(err).toBeInstanceOf(ProviderRejectedError);
  });

  it('an unknown purchase token is a rejection carrying Play’s reason', async () => {
    const err = await adapter.fetchStorePurchase!(ctx('test'), 'not-a-token').catch((e) => e);
    expect(err).toBeInstanceOf(ProviderRejectedError);
    expect(err.status).toBe(400);
    expect(err.reason).toMatch(/purchase token is invalid/);
  });

  it('a token bought for one product does not unlock another', async () => {
    const { purchase_token } = await control('/sandbox-purchase', { product_id: 'annual' });
    expect((await adapter.fetchStorePurchase!(ctx('test'), purchase_token, 'annual')).store_product_id).toBe('annual');
    await expect(adapter.fetchStorePurchase!(ctx('test'), purchase_token, 'monthly')).rejects.toThrow(
      /not for product monthly/,
    );
  });

  it('the lookup after each RTDN agrees with it: canceled keeps access to expiry, grace, hold, revoke', async () => {
    const { purchase_token } = await control('/sandbox-purchase', { product_id: 'annual', app_user_id: 'user-9' });
    const fetchIt = () => adapter.fetchStorePurchase!(ctx('test'), purchase_token);
    const send = (type: string) => control('/events', { type, target: sink, data: { purchaseToken: purchase_token } });

    await send('SUBSCRIPTION_CANCELED');
    let p = await fetchIt();
    expect((p.raw as any).subscriptionState).toBe('SUBSCRIPTION_STATE_CANCELED');
    expect((p.raw as any).canceledStateContext).toHaveProperty('userInitiatedCancellation');
    expect(p.state).toBe('active');

    await send('subscription.restarted');
    await send('SUBSCRIPTION_IN_GRACE_PERIOD');
    expect((await fetchIt()).state).toBe('grace_period');

    await send('SUBSCRIPTION_ON_HOLD');
    expect((await fetchIt()).state).toBe('expired');

    await send('SUBSCRIPTION_RECOVERED');
    p = await fetchIt();
    expect(p.state).toBe('active');

    await send('SUBSCRIPTION_REVOKED');
    p = await fetchIt();
    expect(p.state).toBe('expired');
    expect((p.raw as any).canceledStateContext).toHaveProperty('developerInitiatedCancellation');
  });

  it('acknowledging through the real v1 path shows in the v2 lookup', async () => {
    const { purchase_token } = await control('/sandbox-purchase', { product_id: 'annual' });
    // Use the adapter's own auth to reach the raw endpoint, as a later acknowledge step would.
    const { fetchAccessToken, parseServiceAccount } = await import('../../providers/store_android/auth');
    const { access_token } = await fetchAccessToken(
      parseServiceAccount(acct.credentials.test.service_account_json, emu.url),
      5000,
      emu.url,
    );
    const res = await fetch(
      `${emu.url}/androidpublisher/v3/applications/${acct.account}/purchases/subscriptions/annual/tokens/${encodeURIComponent(purchase_token)}:acknowledge`,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${access_token}`, 'content-type': 'application/json' },
        body: '{}',
      },
    );
    expect(res.status).toBe(200);
    expect((await adapter.fetchStorePurchase!(ctx('test'), purchase_token)).acknowledged).toBe(true);
  });
});
