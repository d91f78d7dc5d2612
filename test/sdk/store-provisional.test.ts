import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appDb, testDb } from '../helpers/db';
import { startStoreStack, type StoreStack } from '../helpers/stores';
import { createStorePurchaseActivities } from '../../activities/store-purchases';
import { sealPurchase } from '../../providers/purchase-ref';
import { createAdapters } from '../../providers';
import { confirmedPremium } from '../helpers/premium';

/**
 * A store purchase registered by the SDK is premium provisionally once the store's server API has
 * confirmed it and the app user has claimed it, before the registration's write
 * (docs/provisional-access.md). The activities the registration workflow runs, one by one against
 * the real Play emulator and Postgres, so the moment between the claim and the write can be read.
 */
describe('store purchase registration: provisional at the store’s confirmation', () => {
  let s: StoreStack;
  let acts: ReturnType<typeof createStorePurchaseActivities>;
  let connectionId: string;

  beforeAll(async () => {
    s = await startStoreStack('store-provisional');
    const config = s.worker.config;
    acts = createStorePurchaseActivities({
      db: appDb(),
      config,
      vault: s.worker.vault,
      adapters: createAdapters(config),
    });
    connectionId = (
      await testDb()('provider_connections')
        .where({ tenant_id: s.tenant.tenant_id, provider: 'store_android' })
        .first('id')
    ).id;
  });
  afterAll(async () => s?.close());

  it('the claim of a confirmed purchase grants provisional access; the write supersedes it', async () => {
    const tenantId = s.tenant.tenant_id;
    const { purchase_token } = await s.control.store_android<{ purchase_token: string }>('POST', '/sandbox-purchase', {
      product_id: 'premium_monthly',
      account: s.accounts.store_android,
      app_user_id: 'p_user',
    });
    const base = { tenantId, provider: 'store_android' as const, connectionId };
    const got = await acts.readStorePurchase({
      ...base,
      mode: 'test',
      purchase: sealPurchase(s.worker.vault, tenantId, 'store_android', purchase_token),
      storeProductId: 'premium_monthly',
      appUserId: 'p_user',
    });
    if (!got.ok) throw new Error(JSON.stringify(got.refusal));
    expect((await s.subscriber('p_user')).body.is_premium).toBe(false);

    const { owner } = await acts.claimStorePurchase({
      tenantId,
      provider: 'store_android',
      purchaseKey: got.read.purchase_key,
      appUserId: 'p_user',
      confirmed: {
        storeProductId: got.read.store_product_id,
        isSandbox: got.read.is_sandbox,
        readAt: got.read.read_at,
        grantsAccess: got.read.state === 'active',
      },
    });
    expect(owner).toBe('p_user');
    const provisional = await s.subscriber('p_user');
    expect(provisional.body).toMatchObject({
      is_premium: true,
      entitlements: [{ source: 'provisional', provider: 'store_android', sku: 'premium_monthly', is_sandbox: true }],
    });
    // A live key sees no sandbox purchase, provisional or not.
    expect((await s.subscriber('p_user', s.pkLive)).body.is_premium).toBe(false);

    await acts.reconcileStorePurchase({ ...base, read: got.read, owner, hint: null, eventIds: [] });
    const written = await s.subscriber('p_user');
    expect(confirmedPremium(written.body)).toBe(true);
    expect(written.body.entitlements).toEqual([expect.objectContaining({ source: 'paid', state: 'active' })]);
    expect(await testDb()('provisional_access').where({ tenant_id: tenantId, app_user_id: 'p_user' })).toEqual([]);
  });

  it('the full registration answers the written entitlement, nothing provisional left', async () => {
    const { purchase_token } = await s.control.store_android<{ purchase_token: string }>('POST', '/sandbox-purchase', {
      product_id: 'premium_monthly',
      account: s.accounts.store_android,
      app_user_id: 'r_user',
    });
    const r = await s.register({
      app_user_id: 'r_user',
      provider: 'store_android',
      product_id: 'premium_monthly',
      purchase_token,
    });
    expect(r.status).toBe(200);
    expect(r.body.entitlements).toEqual([expect.objectContaining({ source: 'paid', state: 'active' })]);
    expect(
      await testDb()('provisional_access').where({ tenant_id: s.tenant.tenant_id, app_user_id: 'r_user' }),
    ).toEqual([]);
  });
});
