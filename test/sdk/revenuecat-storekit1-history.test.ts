import { Order, ProductType, GetTransactionHistoryVersion } from '@apple/app-store-server-library';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, keyWith, refill } from '../helpers/api';
import { testDb } from '../helpers/db';
import { startStoreStack, type StoreStack } from '../helpers/stores';
import { withTenant } from '../../db/tenant-tx';
import { insertRevenueCatKey } from '../../db/revenuecat';
import { APP_RECEIPT_LIMITS } from '../../domain/app-receipt';
import { RC_ERROR } from '../../domain/revenuecat';
import { createEmulatorAccount } from '../../seed/demo-providers';
import { fetchEmulatorRootCa, verifierFor } from '../../providers/store_ios/signed-data';
import { serverApiClient } from '../../providers/store_ios/server-api';
import { Environment } from '@apple/app-store-server-library';

/**
 * A StoreKit 1 app receipt stands for every purchase of the customer who made it, as RevenueCat
 * registers a restore: the service takes one transaction id out of the receipt, reads the
 * customer's transaction history from the App Store Server API (Get Transaction History v2, newest
 * first, paged with `revision`, each signed transaction verified), and registers each distinct
 * purchase (by `originalTransactionId`) through the one store registration, with its checks,
 * limits and restore policy, up to APP_RECEIPT_LIMITS. Real api, worker, Postgres, Temporal and the
 * App Store emulator (its receipts and its Server API); the emulator's history is first read here
 * with Apple's own client, to show it speaks the protocol.
 */
describe('RevenueCat receipts: a StoreKit 1 receipt registers its whole history', () => {
  let s: StoreStack;
  let appl: string;
  let rc: string;
  let writer: string;

  const post = (receipt: string, user: string, key = appl) =>
    call(rc, '/v1/receipts', key, {
      method: 'POST',
      body: JSON.stringify({ app_user_id: user, fetch_token: receipt, is_restore: true, observer_mode: false }),
      headers: { 'X-Platform': 'iOS', 'X-StoreKit-Version': '1', 'X-Is-Sandbox': 'true' },
    });
  /** A device's purchase: StoreKit 1 apps set no appAccountToken; `customer` is the Apple Account buying. */
  const buy = (customer: string, productId: string, opts: Record<string, unknown> = {}) =>
    s.control.store_ios<{ transaction_id: string; signed_transaction: string }>('POST', '/sandbox-purchase', {
      product_id: productId,
      account: s.accounts.store_ios,
      customer,
      ...opts,
    });
  const receiptOf = (transactionId: string, account = s.accounts.store_ios) =>
    s.control.store_ios<{ receipt: string; transaction_ids: string[] }>('POST', '/app-receipt', {
      transaction_id: transactionId,
      account,
    });
  const held = async (user: string) =>
    (
      await testDb()('subscriptions')
        .where({ tenant_id: s.tenant.tenant_id, app_user_id: user, provider: 'store_ios' })
        .select('external_id')
    )
      .map((r) => r.external_id as string)
      .sort();
  const settings = (body: Record<string, unknown>) =>
    call(s.api.apiUrl, '/settings/transfers', writer, { method: 'PATCH', body: JSON.stringify(body) });

  beforeAll(async () => {
    s = await startStoreStack('rc-sk1-history');
    rc = `${s.api.apiRoot}/revenuecat`;
    const tenantId = s.tenant.tenant_id;
    appl = (
      await withTenant(testDb(), tenantId, (trx) =>
        insertRevenueCatKey(trx, { tenantId, platform: 'ios', mode: 'test' }),
      )
    ).public_key;
    writer = (await keyWith(tenantId, ['transfers:read', 'transfers:write'])).secret_key;
    // A second subscription (another group, its own entitlement) and a lifetime unlock, beside premium_monthly.
    await testDb()('products').insert([
      {
        tenant_id: tenantId,
        sku: 'pro_monthly',
        name: 'Pro',
        tier: 'monthly',
        ios_store_product_id: 'pro_monthly',
        entitlement: 'pro',
      },
      {
        tenant_id: tenantId,
        sku: 'lifetime_unlock',
        name: 'Lifetime',
        ios_store_product_id: 'lifetime_unlock',
        entitlement: 'lifetime',
      },
    ]);
  }, 240_000);
  afterAll(async () => s?.close());

  it('the emulator’s Get Transaction History is Apple’s: read with the official client, 20 a page, revision, sort, product type', async () => {
    const account = await createEmulatorAccount(s.emulators.store_ios.url);
    const customer = `history-${Date.now()}`;
    const ids: string[] = [];
    for (let i = 0; i < 22; i++)
      ids.push(
        (
          await s.control.store_ios<{ transaction_id: string }>('POST', '/sandbox-purchase', {
            product_id: `unlock_${i}`,
            product_type: 'NON_CONSUMABLE',
            account: account.account,
            customer,
          })
        ).transaction_id,
      );
    // Another customer's purchase in the same app is not theirs.
    await s.control.store_ios('POST', '/sandbox-purchase', {
      product_id: 'unlock_x',
      product_type: 'NON_CONSUMABLE',
      account: account.account,
    });
    const client = serverApiClient({
      baseUrl: s.emulators.store_ios.url,
      mode: 'test',
      credential: account.credentials.test,
      accountRef: account.account,
    });
    const verifier = verifierFor(
      { roots: [await fetchEmulatorRootCa(s.emulators.store_ios.url)], onlineChecks: false },
      Environment.SANDBOX,
      account.account,
    );
    const first = await client.getTransactionHistory(ids[5], null, {}, GetTransactionHistoryVersion.V2);
    expect(first).toMatchObject({ hasMore: true, bundleId: account.account, environment: 'Sandbox' });
    expect(first.signedTransactions).toHaveLength(20);
    const second = await client.getTransactionHistory(ids[5], first.revision!, {}, GetTransactionHistoryVersion.V2);
    expect(second.hasMore).toBe(false);
    const decode = async (list: string[] | undefined) =>
      Promise.all((list ?? []).map(async (j) => (await verifier.verifyAndDecodeTransaction(j)).transactionId));
    // Ascending by default: the oldest first, every purchase of the customer once, over the two pages.
    expect([...(await decode(first.signedTransactions)), ...(await decode(second.signedTransactions))]).toEqual(ids);
    const newest = await client.getTransactionHistory(
      ids[0],
      null,
      { sort: Order.DESCENDING },
      GetTransactionHistoryVersion.V2,
    );
    expect((await decode(newest.signedTransactions))[0]).toBe(ids[21]);
    // A product type filter: this customer has no subscriptions.
    const subs = await client.getTransactionHistory(
      ids[0],
      null,
      { productTypes: [ProductType.AUTO_RENEWABLE] },
      GetTransactionHistoryVersion.V2,
    );
    expect([subs.signedTransactions, subs.hasMore]).toEqual([[], false]);
    // Apple's errors: an unknown transaction is 404 4040010, a made-up revision 400 4000005.
    await expect(
      client.getTransactionHistory('2000000999999999', null, {}, GetTransactionHistoryVersion.V2),
    ).rejects.toMatchObject({
      httpStatusCode: 404,
      apiError: 4040010,
    });
    await expect(
      client.getTransactionHistory(ids[0], 'bm90LWEtcmV2aXNpb24', {}, GetTransactionHistoryVersion.V2),
    ).rejects.toMatchObject({
      httpStatusCode: 400,
      apiError: 4000005,
    });
  });

  it('a receipt with two subscriptions and a non-consumable registers all three; customer info lists them', async () => {
    const customer = `restore-${Date.now()}`;
    const monthly = await buy(customer, 'premium_monthly');
    const pro = await buy(customer, 'pro_monthly');
    const lifetime = await buy(customer, 'lifetime_unlock', { product_type: 'NON_CONSUMABLE' });
    // The device's receipt holds the customer's every purchase; ReceiptUtility takes the first record's id.
    const { receipt, transaction_ids } = await receiptOf(monthly.transaction_id);
    expect(transaction_ids).toEqual([monthly.transaction_id, pro.transaction_id, lifetime.transaction_id]);

    const r = await post(receipt, 'sk1_restorer');
    expect(r.status).toBe(200);
    const sub = r.body.subscriber;
    expect(Object.keys(sub.subscriptions).sort()).toEqual(['premium_monthly', 'pro_monthly']);
    // The non-consumable is a non-subscription transaction to RevenueCat's SDKs, not a subscription.
    expect(Object.keys(sub.non_subscriptions)).toEqual(['lifetime_unlock']);
    expect(sub.non_subscriptions.lifetime_unlock).toEqual([
      expect.objectContaining({ id: expect.any(String), store: 'app_store', is_sandbox: true }),
    ]);
    expect(Object.keys(sub.entitlements).sort()).toEqual(['lifetime', 'premium', 'pro']);
    expect(sub.entitlements.premium.product_identifier).toBe('premium_monthly');
    expect(sub.entitlements.pro.product_identifier).toBe('pro_monthly');
    // A non-consumable never ends.
    expect(sub.entitlements.lifetime).toMatchObject({ product_identifier: 'lifetime_unlock', expires_date: null });
    expect(Date.parse(sub.entitlements.pro.expires_date)).toBeGreaterThan(Date.now());
    expect(await held('sk1_restorer')).toEqual(
      [monthly.transaction_id, pro.transaction_id, lifetime.transaction_id].sort(),
    );
    // The same receipt again: the same rows, the same answer.
    const again = await post(receipt, 'sk1_restorer');
    expect(again.status).toBe(200);
    expect(Object.keys(again.body.subscriber.entitlements).sort()).toEqual(['lifetime', 'premium', 'pro']);
    expect(await held('sk1_restorer')).toHaveLength(3);
  }, 180_000);

  it('a receipt of another app or of the other environment is still 7103; nothing is written', async () => {
    await refill(s.tenant.tenant_id);
    const otherApp = await createEmulatorAccount(s.emulators.store_ios.url);
    const foreign = await s.control.store_ios<{ transaction_id: string }>('POST', '/sandbox-purchase', {
      product_id: 'premium_monthly',
      account: otherApp.account,
    });
    // A real (Production) purchase's receipt posted with a test key: the Sandbox does not know it.
    const real = await buy(`prod-${Date.now()}`, 'premium_monthly', { environment: 'Production' });
    for (const [what, receipt] of [
      ['another app', (await receiptOf(foreign.transaction_id, otherApp.account)).receipt],
      ['Production', (await receiptOf(real.transaction_id)).receipt],
    ] as const) {
      const r = await post(receipt, 'sk1_wrong_place');
      expect([what, r.status, r.body.code]).toEqual([what, 404, RC_ERROR.invalidReceiptToken]);
    }
    expect(await held('sk1_wrong_place')).toEqual([]);
  }, 120_000);

  it('a live key reads the Production history: every signed transaction verified against the app’s Apple ID', async () => {
    await refill(s.tenant.tenant_id);
    const tenantId = s.tenant.tenant_id;
    const live = (
      await withTenant(testDb(), tenantId, (trx) =>
        insertRevenueCatKey(trx, { tenantId, platform: 'ios', mode: 'live' }),
      )
    ).public_key;
    const customer = `live-${Date.now()}`;
    const monthly = await buy(customer, 'premium_monthly', { environment: 'Production' });
    const lifetime = await buy(customer, 'lifetime_unlock', {
      product_type: 'NON_CONSUMABLE',
      environment: 'Production',
    });
    const { receipt } = await receiptOf(monthly.transaction_id);
    const r = await post(receipt, 'sk1_live_user', live);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body.subscriber.entitlements).sort()).toEqual(['lifetime', 'premium']);
    expect(r.body.subscriber.subscriptions.premium_monthly.is_sandbox).toBe(false);
    expect(await held('sk1_live_user')).toEqual([monthly.transaction_id, lifetime.transaction_id].sort());
    // The test key does not see them (the Sandbox does not know a real purchase).
    const test = await post(receipt, 'sk1_live_user_test');
    expect([test.status, test.body.code]).toEqual([404, RC_ERROR.invalidReceiptToken]);
  }, 120_000);

  it('a purchase another app user holds follows the restore policy per purchase; the others are the caller’s', async () => {
    await refill(s.tenant.tenant_id);
    const customer = `shared-${Date.now()}`;
    const monthly = await buy(customer, 'premium_monthly');
    const lifetime = await buy(customer, 'lifetime_unlock', { product_type: 'NON_CONSUMABLE' });
    // The holder registered the subscription alone (StoreKit 2's signed transaction).
    const holder = await call(rc, '/v1/receipts', appl, {
      method: 'POST',
      body: JSON.stringify({ app_user_id: 'sk1_holder', fetch_token: monthly.signed_transaction }),
    });
    expect(holder.status).toBe(200);
    const { receipt } = await receiptOf(lifetime.transaction_id);

    // Keep with the original: the subscription stays the holder's, the non-consumable is the caller's.
    expect((await settings({ restore_behavior: 'keep_with_original' })).status).toBe(200);
    const kept = await post(receipt, 'sk1_second_device');
    expect(kept.status).toBe(200);
    expect(Object.keys(kept.body.subscriber.entitlements)).toEqual(['lifetime']);
    expect(await held('sk1_second_device')).toEqual([lifetime.transaction_id]);
    expect(await held('sk1_holder')).toEqual([monthly.transaction_id]);
    expect((await s.subscriber('sk1_holder')).body.is_premium).toBe(true);

    // Every purchase held by someone else under that policy: the first refusal, RevenueCat's 7102.
    const none = await post(receipt, 'sk1_third_device');
    expect([none.status, none.body.code]).toEqual([409, RC_ERROR.cannotTransferPurchase]);
    expect(await held('sk1_third_device')).toEqual([]);

    // Transfer: the same receipt moves the subscription to the caller too.
    await refill(s.tenant.tenant_id);
    expect((await settings({ restore_behavior: 'transfer' })).status).toBe(200);
    const moved = await post(receipt, 'sk1_second_device');
    expect(moved.status).toBe(200);
    expect(Object.keys(moved.body.subscriber.entitlements).sort()).toEqual(['lifetime', 'premium']);
    expect(await held('sk1_second_device')).toEqual([monthly.transaction_id, lifetime.transaction_id].sort());
    expect((await s.subscriber('sk1_holder')).body.is_premium).toBe(false);
    await settings({ restore_behavior: 'keep_with_original' });
  }, 180_000);

  it(`the cap holds: a customer with more than ${APP_RECEIPT_LIMITS.maxPurchases} purchases registers the most recent ones only`, async () => {
    await refill(s.tenant.tenant_id);
    const customer = `many-${Date.now()}`;
    const ids: string[] = [];
    const extra = 3;
    for (let i = 0; i < APP_RECEIPT_LIMITS.maxPurchases + extra; i++)
      ids.push((await buy(customer, `cap_unlock_${i}`, { product_type: 'NON_CONSUMABLE' })).transaction_id);
    const { receipt } = await receiptOf(ids[0]);
    const r = await post(receipt, 'sk1_collector');
    expect(r.status).toBe(200);
    // The newest purchases are registered; the oldest are left to the store's notifications or an import.
    expect(await held('sk1_collector')).toEqual(ids.slice(extra).sort());
  }, 240_000);
});
