import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, refill } from '../helpers/api';
import { testDb } from '../helpers/db';
import { startStoreStack, type StoreStack } from '../helpers/stores';
import { withTenant } from '../../db/tenant-tx';
import { insertRevenueCatKey } from '../../db/revenuecat';
import { RC_ERROR } from '../../domain/revenuecat';
import { androidReceiptBody, iosReceiptBody, postReceipt as postReceiptTo } from '../helpers/revenuecat';

/**
 * POST /revenuecat/v1/receipts as RevenueCat's mobile SDKs send it, through our one store
 * registration, against the real worker and both store emulators.
 *
 * The bodies are those the SDKs build, each cited with its source file and commit in
 * test/helpers/revenuecat.ts (test/start/first-hour.test.ts sends the same to `npm start`).
 */
describe('RevenueCat receipts from the mobile SDKs', () => {
  let s: StoreStack;
  let goog: string;
  let appl: string;
  let web: string;
  let rc: string;

  const postReceipt = (key: string, body: Record<string, unknown>, platform: string) =>
    postReceiptTo(rc, key, body, platform);
  const androidBody = (token: string, user: string) => androidReceiptBody(token, user);
  const iosBody = (jws: string, user: string) => iosReceiptBody(jws, user);
  const buyAndroid = (user: string) =>
    s.control.store_android<{ purchase_token: string }>('POST', '/sandbox-purchase', {
      product_id: 'premium_monthly',
      account: s.accounts.store_android,
      app_user_id: user,
    });
  const buyIos = (user: string) =>
    s.control.store_ios<{ transaction_id: string; signed_transaction: string }>('POST', '/sandbox-purchase', {
      product_id: 'premium_monthly',
      account: s.accounts.store_ios,
      app_user_id: user,
    });

  beforeAll(async () => {
    s = await startStoreStack('rc-receipts');
    rc = `${s.api.apiRoot}/revenuecat`;
    const tenantId = s.tenant.tenant_id;
    const mint = (platform: 'web' | 'ios' | 'android') =>
      withTenant(testDb(), tenantId, (trx) => insertRevenueCatKey(trx, { tenantId, platform, mode: 'test' }));
    [goog, appl, web] = [
      (await mint('android')).public_key,
      (await mint('ios')).public_key,
      (await mint('web')).public_key,
    ];
  });
  afterAll(async () => s?.close());

  it('Android: a Play purchase token → the entitlement is active in RevenueCat’s body; the same as /v1/sdk', async () => {
    const { purchase_token } = await buyAndroid('rc_a_user');
    const r = await postReceipt(goog, androidBody(purchase_token, 'rc_a_user'), 'android');
    expect(r.status).toBe(200);
    expect(r.body.subscriber.original_app_user_id).toBe('rc_a_user');
    const premium = r.body.subscriber.entitlements.premium;
    expect(premium).toMatchObject({ product_identifier: 'premium_monthly' });
    expect(Date.parse(premium.expires_date)).toBeGreaterThan(Date.now());
    expect(r.body.subscriber.subscriptions.premium_monthly).toMatchObject({ store: 'play_store', is_sandbox: true });
    // One entitlement model: /v1/sdk answers premium with the same expiry.
    const sdk = await s.subscriber('rc_a_user');
    expect(sdk.body.is_premium).toBe(true);
    expect(sdk.body.entitlements[0].expires_at).toBe(premium.expires_date);
    // The attributes sent along are kept (customer view), never used for access.
    const attrs = await testDb()('subscriber_attributes').where({
      tenant_id: s.tenant.tenant_id,
      app_user_id: 'rc_a_user',
    });
    expect(attrs.map((a) => a.name)).toEqual(['$email']);
    // The customer info read answers the same.
    const read = await call(rc, '/v1/subscribers/rc_a_user', goog);
    expect(read.body.subscriber.entitlements).toEqual(r.body.subscriber.entitlements);
  });

  it('Android: the token of another app user is RevenueCat’s 7102 (cannot transfer); a forged one 7103', async () => {
    const { purchase_token } = await buyAndroid('rc_owner');
    expect((await postReceipt(goog, androidBody(purchase_token, 'rc_owner'), 'android')).status).toBe(200);
    const thief = await postReceipt(goog, androidBody(purchase_token, 'rc_thief'), 'android');
    expect(thief.status).toBe(409);
    expect(thief.body).toEqual({ code: RC_ERROR.cannotTransferPurchase, message: expect.any(String) });
    const forged = await postReceipt(goog, androidBody('forged-token-play-never-issued', 'rc_f'), 'android');
    expect(forged.status).toBe(404);
    expect(forged.body.code).toBe(RC_ERROR.invalidReceiptToken);
    const noProduct = await postReceipt(goog, { ...androidBody('x', 'rc_f'), product_ids: [] }, 'android');
    expect(noProduct.status).toBe(400);
    expect(noProduct.body.code).toBe(RC_ERROR.productIdForGoogleReceiptNotProvided);
  });

  it('iOS: a StoreKit 2 jwsRepresentation from the App Store emulator → active; a StoreKit 1 receipt is refused (7103)', async () => {
    const { signed_transaction } = await buyIos('rc_i_user');
    const r = await postReceipt(appl, iosBody(signed_transaction, 'rc_i_user'), 'iOS');
    expect(r.status).toBe(200);
    expect(r.body.subscriber.entitlements.premium.product_identifier).toBe('premium_monthly');
    expect(r.body.subscriber.subscriptions.premium_monthly).toMatchObject({ store: 'app_store', is_sandbox: true });
    expect((await s.subscriber('rc_i_user')).body.is_premium).toBe(true);
    const sk1 = await postReceipt(
      appl,
      iosBody(Buffer.from('a StoreKit 1 receipt').toString('base64'), 'rc_i2'),
      'iOS',
    );
    expect(sk1.status).toBe(400);
    expect(sk1.body.code).toBe(RC_ERROR.invalidReceiptToken);
  });

  it('the key decides the store, not X-Platform; a web key posts no receipts (7000); a secret key is 401', async () => {
    await refill(s.tenant.tenant_id);
    const { purchase_token } = await buyAndroid('rc_w_user');
    const viaWeb = await postReceipt(web, androidBody(purchase_token, 'rc_w_user'), 'android');
    expect(viaWeb.status).toBe(400);
    expect(viaWeb.body.code).toBe(RC_ERROR.invalidPlatform);
    // An Android token sent with an iOS key says iOS whatever the header: not a StoreKit 2 transaction.
    const mixed = await postReceipt(appl, androidBody(purchase_token, 'rc_w_user'), 'android');
    expect(mixed.status).toBe(400);
    const secret = await postReceipt(s.tenant.secret_key, androidBody(purchase_token, 'rc_w_user'), 'android');
    expect(secret.status).toBe(401);
    expect(secret.body.code).toBe(RC_ERROR.invalidApiKey);
    expect((await s.subscriber('rc_w_user')).body.is_premium).toBe(false);
  });
});
