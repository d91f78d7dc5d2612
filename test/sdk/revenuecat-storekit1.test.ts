import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, newTenant } from '../helpers/api';
import { testDb } from '../helpers/db';
import { createProvenConnection } from '../helpers/connections';
import { startStoreStack, type StoreStack } from '../helpers/stores';
import { withTenant } from '../../db/tenant-tx';
import { attachToApp } from '../../db/app-providers';
import { insertRevenueCatKey } from '../../db/revenuecat';
import { RC_ERROR } from '../../domain/revenuecat';
import { createEmulatorAccount } from '../../seed/demo-providers';
import { encodeAppReceipt } from '../../emulators/store_ios/app-receipt';
import { loadPki } from '../../emulators/store_ios/pki';
import { transactionIdOfAppReceipt } from '../../providers/store_ios/app-receipt';

/**
 * POST /revenuecat/v1/receipts with a StoreKit 1 app receipt, as purchases-ios sends it when it
 * runs on StoreKit 1: the app receipt's bytes, base64 (`EncodedAppleReceipt.receipt(data)` →
 * `data.base64EncodedString()`, Sources/Purchasing/StoreKitAbstractions/EncodedAppleReceipt.swift),
 * in the body of RevenueCat/purchases-ios's own snapshot
 * Tests/UnitTests/Networking/Backend/__Snapshots__/BackendPostReceiptDataTests/iOS17-testPostsReceiptDataWithProductDataCorrectly.1.json
 * (both at commit ff486da380002b66ba57efd9910f62db7ad2c225): `app_user_id`, `attributes`,
 * `currency`, `fetch_token`, `initiation_source`, `is_restore`, `observer_mode`,
 * `payload_version`, `price`, `product_id`, `purchase_completed_by`, `sdk_originated`,
 * `store_country`. The receipt is the App Store emulator's (`POST /__control/app-receipt`, a
 * PKCS#7 container of the purchase's in-app records); the service takes a transaction id out of
 * it and reads that from the emulator's App Store Server API, with the real worker.
 */
describe('RevenueCat receipts: StoreKit 1 app receipts', () => {
  let s: StoreStack;
  let appl: string;
  let rc: string;

  const sk1Body = (receipt: string, user: string) => ({
    app_user_id: user,
    attributes: { $attConsentStatus: { updated_at_ms: 1678307200000, value: 'authorized' } },
    currency: 'USD',
    fetch_token: receipt,
    initiation_source: 'purchase',
    is_restore: false,
    observer_mode: true,
    payload_version: 1,
    price: '15.99',
    product_id: 'premium_monthly',
    purchase_completed_by: 'my_app',
    sdk_originated: false,
    store_country: 'ESP',
  });
  // The headers of the same snapshot that matter here: read by nobody, the key decides.
  const headers = { 'X-Platform': 'iOS', 'X-StoreKit-Version': '1', 'X-Is-Sandbox': 'true', 'X-Version': '4.0.0' };
  const post = (key: string, body: Record<string, unknown>) =>
    call(rc, '/v1/receipts', key, { method: 'POST', body: JSON.stringify(body), headers });
  const buy = (user: string, account = s.accounts.store_ios) =>
    s.control.store_ios<{ transaction_id: string }>('POST', '/sandbox-purchase', {
      product_id: 'premium_monthly',
      account,
      app_user_id: user,
    });
  const receiptOf = (transactionId: string, account = s.accounts.store_ios) =>
    s.control.store_ios<{ receipt: string; bundle_id: string; transaction_ids: string[] }>('POST', '/app-receipt', {
      transaction_id: transactionId,
      account,
    });
  const mintIos = (tenantId: string) =>
    withTenant(testDb(), tenantId, (trx) => insertRevenueCatKey(trx, { tenantId, platform: 'ios', mode: 'test' }));

  beforeAll(async () => {
    s = await startStoreStack('rc-sk1');
    rc = `${s.api.apiRoot}/revenuecat`;
    appl = (await mintIos(s.tenant.tenant_id)).public_key;
  });
  afterAll(async () => s?.close());

  it('the emulator’s receipt is what Apple’s ReceiptUtility reads: a transaction id of the purchase', async () => {
    const { transaction_id } = await buy('sk1_parse');
    const r = await receiptOf(transaction_id);
    expect(r.transaction_ids).toEqual([transaction_id]);
    expect(transactionIdOfAppReceipt(r.receipt)).toBe(transaction_id);
    // The container is PKCS#7 signed data (OID 1.2.840.113549.1.7.2) with the bundle id inside.
    const der = Buffer.from(r.receipt, 'base64');
    expect(der.includes(Buffer.from('06092a864886f70d010702', 'hex'))).toBe(true);
    expect(der.includes(Buffer.from(r.bundle_id))).toBe(true);
  });

  it('a StoreKit 1 receipt → the entitlement, read from the App Store Server API; the same answer as /v1/sdk', async () => {
    const { transaction_id } = await buy('sk1_user');
    const { receipt } = await receiptOf(transaction_id);
    expect((await s.subscriber('sk1_user')).body.is_premium).toBe(false);
    const r = await post(appl, sk1Body(receipt, 'sk1_user'));
    expect(r.status).toBe(200);
    const premium = r.body.subscriber.entitlements.premium;
    expect(premium.product_identifier).toBe('premium_monthly');
    expect(Date.parse(premium.expires_date)).toBeGreaterThan(Date.now());
    expect(r.body.subscriber.subscriptions.premium_monthly).toMatchObject({ store: 'app_store', is_sandbox: true });
    const sdk = await s.subscriber('sk1_user');
    expect(sdk.body.is_premium).toBe(true);
    expect(sdk.body.entitlements[0].expires_at).toBe(premium.expires_date);
    // The purchase is held under the original transaction id, as a StoreKit 2 registration holds it.
    const held = await testDb()('subscriptions').where({
      tenant_id: s.tenant.tenant_id,
      app_user_id: 'sk1_user',
      provider: 'store_ios',
    });
    expect(held.map((h) => h.external_id)).toEqual([transaction_id]);
    // The same receipt again answers the same; another app user is refused as for any held purchase (7102).
    expect((await post(appl, sk1Body(receipt, 'sk1_user'))).status).toBe(200);
    const other = await post(appl, sk1Body(receipt, 'sk1_someone_else'));
    expect([other.status, other.body.code]).toEqual([409, RC_ERROR.cannotTransferPurchase]);
    expect((await s.subscriber('sk1_someone_else')).body.is_premium).toBe(false);
  });

  it('garbage, a receipt with no purchase, a transaction the App Store does not know, another app’s receipt: 7103, never a 5xx', async () => {
    const pki = loadPki({ find: () => undefined, insert: (_k: string, r: unknown) => r } as never);
    const bundle = (await receiptOf((await buy('sk1_bundle')).transaction_id)).bundle_id;
    const unknown = encodeAppReceipt(pki.trusted, bundle, 'Sandbox', [
      {
        transactionId: '2000000999999999',
        originalTransactionId: '2000000999999999',
        productId: 'premium_monthly',
        quantity: 1,
        purchaseDate: Date.now(),
        originalPurchaseDate: Date.now(),
        expiresDate: Date.now() + 86_400_000,
        webOrderLineItemId: '1',
      } as never,
    ]);
    const empty = encodeAppReceipt(pki.trusted, bundle, 'Sandbox', []);
    // Another app (another bundle id, its own App Store account) bought it: our credential's app never sold it.
    const otherApp = await createEmulatorAccount(s.emulators.store_ios.url);
    const foreign = (await receiptOf((await buy('sk1_other_app', otherApp.account)).transaction_id, otherApp.account))
      .receipt;
    const cases: [string, string, number][] = [
      // The snapshot's own token: "an awesome receipt".
      ['snapshot', 'YW4gYXdlc29tZSByZWNlaXB0', 400],
      ['not base64', 'this is not a receipt!', 400],
      ['truncated', foreign.slice(0, 200), 400],
      ['no purchase', empty, 400],
      ['unknown transaction', unknown, 404],
      ['another app', foreign, 404],
    ];
    for (const [what, token, status] of cases) {
      const r = await post(appl, sk1Body(token, 'sk1_bad'));
      expect([what, r.status, r.body.code]).toEqual([what, status, RC_ERROR.invalidReceiptToken]);
    }
    expect((await s.subscriber('sk1_bad')).body.is_premium).toBe(false);
  });

  it('another tenant’s key with this tenant’s receipt: its own App Store account does not know it (7103); nothing moves', async () => {
    const { transaction_id } = await buy('sk1_owner');
    const { receipt } = await receiptOf(transaction_id);
    expect((await post(appl, sk1Body(receipt, 'sk1_owner'))).status).toBe(200);

    const b = await newTenant('rc-sk1-b');
    const account = await createEmulatorAccount(s.emulators.store_ios.url);
    await withTenant(testDb(), b.tenant_id, async (trx) => {
      await createProvenConnection(trx, s.worker.vault, {
        provider: 'store_ios',
        account_ref: account.account,
        credentials: account.credentials,
      });
      await attachToApp(trx, b.app_id, 'store_ios');
    });
    const applB = (await mintIos(b.tenant_id)).public_key;
    const r = await post(applB, sk1Body(receipt, 'sk1_owner'));
    expect([r.status, r.body.code]).toEqual([404, RC_ERROR.invalidReceiptToken]);
    expect(await testDb()('subscriptions').where({ tenant_id: b.tenant_id })).toEqual([]);
    // Tenant A's customer is untouched, and tenant B's key reads nothing of theirs.
    expect((await s.subscriber('sk1_owner')).body.is_premium).toBe(true);
    const read = await call(rc, '/v1/subscribers/sk1_owner', applB);
    expect(read.body.subscriber.entitlements).toEqual({});
  });
});
