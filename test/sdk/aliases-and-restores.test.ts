import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Billing, BillingError, MemoryStorage } from '../../sdk/src/index';
import { purchaseKey, tokenHashOfKey } from '../../providers/purchase-ref';
import { call, keyWith, refill } from '../helpers/api';
import { testDb } from '../helpers/db';
import { startStoreStack, type StoreStack } from '../helpers/stores';
import { playPurchases } from '../helpers/play-purchases';

/**
 * Aliases are not transfers, and what the SDK shows of a restore (docs/transfers.md), end to end
 * on one stack: the real API, worker, Postgres and the Play emulator, with the SDK itself
 * (sdk/src) talking to the API. Our SDK's identify (an anonymous user signing in) and the tenant's
 * backend merge; a sandbox purchase never reaching live answers or live charts; `restore()` and a
 * store checkout answering `pending_review` under the review policy; a transfer racing a renewal
 * and a refund.
 */
describe('aliases and restores', () => {
  let s: StoreStack;
  let writer: string;
  const { buy, register, notify: rtdn, processed } = playPurchases(() => s);
  const premium = async (user: string, key?: string) => {
    await refill(s.tenant.tenant_id);
    return (await s.subscriber(user, key)).body.is_premium as boolean;
  };
  const api = (path: string, key: string, init: RequestInit = {}) => call(s.api.apiUrl, path, key, init);
  const settings = (body: Record<string, unknown>) =>
    api('/settings/transfers', writer, { method: 'PATCH', body: JSON.stringify(body) });
  const identify = (from: string, body: unknown, key = s.pkTest) =>
    call(s.api.apiRoot, `/v1/sdk/subscribers/${encodeURIComponent(from)}/identify`, key, {
      method: 'POST',
      body: JSON.stringify(body),
    });
  const merge = (into: string, from: string, key = writer) =>
    api(`/customers/${into}/merge`, key, { method: 'POST', body: JSON.stringify({ from_app_user_id: from }) });
  const sdk = (appUserId: string, extra: Partial<Parameters<typeof Billing.configure>[0]> = {}) =>
    Billing.configure({
      publishableKey: s.pkTest,
      backend: s.api.apiRoot,
      appUserId,
      platform: 'android',
      storage: new MemoryStorage(),
      // Every refresh asks the service (the default window shares one request per 10 s).
      refreshWindowMs: 0,
      warn: () => {},
      ...extra,
    });
  /** The purchase's entitlement rows and who holds its claim (the store writes for the holder). */
  const purchaseRows = async (token: string) => {
    const key = purchaseKey('store_android', token);
    return {
      holder: (
        await testDb()('store_purchase_tokens')
          .where({ tenant_id: s.tenant.tenant_id, token_hash: tokenHashOfKey('store_android', key) })
          .first()
      )?.app_user_id,
      entitlements: await testDb()('entitlements as e')
        .join('subscriptions as s', 's.id', 'e.subscription_id')
        .where({ 'e.tenant_id': s.tenant.tenant_id, 's.external_id': key })
        .select('e.app_user_id', 'e.state'),
    };
  };

  beforeAll(async () => {
    s = await startStoreStack('aliases');
    writer = (await keyWith(s.tenant.tenant_id, ['transfers:read', 'transfers:write', 'customers:write'])).secret_key;
  });
  afterEach(() => Billing.reset());
  afterAll(async () => s?.close());

  it('identify from an anonymous id: one customer, both ids answer it; no transfer, and no live answer sees the sandbox purchase', async () => {
    const anon = Billing.anonymousId();
    expect(anon).toMatch(/^\$RCAnonymousID:[0-9a-f]{32}$/);
    const token = await buy(anon);
    expect((await register(anon, token)).body.is_premium).toBe(true);

    const billing = sdk(anon);
    const signedIn = await billing.identify('alias_user');
    expect(signedIn).toMatchObject({ appUserId: 'alias_user', isPremium: true, stale: false });
    expect(billing.appUserId).toBe('alias_user');
    expect((await billing.refresh()).isPremium).toBe(true);
    expect([await premium('alias_user'), await premium(anon)]).toEqual([true, true]);
    // Sandbox stays sandbox: the live key's answer for either id has nothing of it.
    for (const id of ['alias_user', anon]) {
      const live = await s.subscriber(id, s.pkLive);
      expect(live.body).toMatchObject({ is_premium: false, entitlements: [] });
    }
    // The rows stayed where they were written: an alias moves nothing.
    expect((await purchaseRows(token)).entitlements).toEqual([{ app_user_id: anon, state: 'active' }]);
    // The support desk sees one customer under two ids, from either side.
    const desk = (await keyWith(s.tenant.tenant_id, ['customers:read'])).secret_key;
    const page = (await api('/customers/alias_user', desk)).body;
    expect(page).toMatchObject({ known_as: [anon], is_premium: true });
    expect(page.entitlements.filter((e: any) => e.source === 'paid')).toHaveLength(1);
    expect((await api(`/customers/${encodeURIComponent(anon)}`, desk)).body.known_as).toEqual(['alias_user']);

    // The identified user restoring the purchase is no transfer, even under review: theirs already.
    await settings({ restore_behavior: 'review' });
    const restored = await register('alias_user', token);
    expect(restored.status, JSON.stringify(restored.body)).toBe(200);
    expect(restored.body.is_premium).toBe(true);
    expect((await api('/transfers?app_user_id=alias_user', writer)).body.data).toEqual([]);
    await settings({ restore_behavior: 'keep_with_original' });
    expect((await register('alias_user', token)).status).toBe(200);
  });

  it('identify between two identified ids answers the new user and merges nothing; bad input is 400 with its param', async () => {
    const token = await buy('ident_a');
    await register('ident_a', token);
    const r = await identify('ident_a', { new_app_user_id: 'ident_b' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ object: 'subscriber', app_user_id: 'ident_b', is_premium: false });
    expect([await premium('ident_a'), await premium('ident_b')]).toEqual([true, false]);
    expect(await testDb()('app_user_aliases').where({ tenant_id: s.tenant.tenant_id, app_user_id: 'ident_b' })).toEqual(
      [],
    );
    const bad = await identify('ident_a', { new_app_user_id: '' });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: 'invalid_request', param: 'new_app_user_id' });
    expect((await identify('ident_a', { new_app_user_id: 'x' }, s.tenant.secret_key)).status).toBe(401);
  });

  it("the tenant's backend merges two identified users, with a secret key only", async () => {
    const token = await buy('merge_a');
    await register('merge_a', token);
    const reader = (await keyWith(s.tenant.tenant_id, ['customers:read'])).secret_key;
    expect((await merge('merge_b', 'merge_a', s.pkTest)).status).toBe(401);
    expect((await merge('merge_b', 'merge_a', reader)).status).toBe(403);
    const merged = await merge('merge_b', 'merge_a');
    expect(merged.status).toBe(200);
    expect(merged.body).toEqual({
      object: 'customer_merge',
      app_user_id: 'merge_b',
      from_app_user_id: 'merge_a',
      merged: true,
    });
    expect([await premium('merge_a'), await premium('merge_b')]).toEqual([true, true]);
    expect((await merge('merge_b', 'merge_a')).body.merged).toBe(false);
    const self = await merge('merge_b', 'merge_b');
    expect(self.status).toBe(400);
    expect(self.body).toMatchObject({ error: 'invalid_request', param: 'from_app_user_id' });
    const elsewhere = await merge('merge_c', 'merge_a');
    expect(elsewhere.status).toBe(409);
    expect(elsewhere.body).toMatchObject({ error: 'customer_already_merged', param: 'from_app_user_id' });
    const intoAlias = await merge('merge_a', 'merge_d');
    expect(intoAlias.body).toMatchObject({ error: 'customer_already_merged', param: 'app_user_id' });
    const audit = await testDb()('audit_entries')
      .where({ tenant_id: s.tenant.tenant_id, action: 'customers.merge' })
      .select('outcome');
    expect(audit.map((a) => a.outcome)).toContain('ok');

    // The store refunds the purchase stored under merge_a: the tenant's backend hears it about the customer,
    // merge_b, on merge_b's chain, with merge_a in known_as; merge_a's chain keeps what it had before the merge.
    const chain = async (id: string) => (await api(`/customers/${id}/events`, reader)).body.data as any[];
    const before = await chain('merge_a');
    expect(before.length).toBeGreaterThan(0);
    await s.control.store_android('POST', '/void', { purchase_token: token, account: s.accounts.store_android });
    await processed((await rtdn('VOIDED_PURCHASE', token)).id);
    const after = await chain('merge_b');
    expect(after.map((e) => e.type)).toContain('entitlement.revoked');
    expect(after.map((e) => [e.data.app_user_id, e.data.known_as, e.data.sequence])).toEqual(
      after.map((_, i) => ['merge_b', ['merge_a'], i + 1]),
    );
    expect(after.find((e) => e.type === 'entitlement.revoked').data.entitlements).toEqual([
      expect.objectContaining({ state: 'revoked', is_sandbox: true }),
    ]);
    expect(await chain('merge_a')).toEqual(before);
  });

  it('restore() and a store checkout under review answer pending_review with the transfer; approval shows on refresh', async () => {
    await settings({ restore_behavior: 'review', undo_hours: 1 });
    const token = await buy('rv_holder');
    await register('rv_holder', token);
    const billing = sdk('rv_new');
    const result = await billing.restore({
      provider: 'store_android',
      productId: 'premium_monthly',
      purchaseToken: token,
    });
    expect(result.status).toBe('pending_review');
    expect(result.entitlements.isPremium).toBe(false);
    const [pending] = (await api('/transfers?app_user_id=rv_new', writer)).body.data;
    expect(result).toMatchObject({ transferId: pending.id });
    expect(pending).toMatchObject({ status: 'pending', from_app_user_id: 'rv_holder' });
    expect((await api(`/transfers/${pending.id}/approve`, writer, { method: 'POST' })).status).toBe(200);
    expect((await billing.refresh()).isPremium).toBe(true);
    Billing.reset();

    // The same through a store checkout: the store sold a purchase someone else holds.
    const other = await buy('rv_holder2');
    await register('rv_holder2', other);
    const store = sdk('rv_new2', {
      storeBilling: { activity: {}, purchase: async () => ({ purchaseToken: other, productId: 'premium_monthly' }) },
    });
    const checkout = await store.checkout({
      planId: 'premium_monthly',
      product: { kind: 'digital', android_store_product_id: 'premium_monthly' },
    });
    expect(checkout).toMatchObject({ state: 'pending_review', lane: 'store', transferId: expect.any(String) });
    Billing.reset();

    // Kept with the original: restore() throws, with the service's reason.
    await settings({ restore_behavior: 'keep_with_original' });
    const kept = await buy('rv_keep');
    await register('rv_keep', kept);
    const refused = await sdk('rv_other')
      .restore({ provider: 'store_android', productId: 'premium_monthly', purchaseToken: kept })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(refused).toBeInstanceOf(BillingError);
    expect(refused).toMatchObject({
      code: 'purchase_registration_failed',
      details: { status: 409, serviceCode: 'purchase_token_reused' },
    });
  });

  it('sandbox stays sandbox: a transferred sandbox purchase is on no live answer and in no live chart', async () => {
    await settings({ restore_behavior: 'transfer', undo_hours: 1 });
    const charts = (await keyWith(s.tenant.tenant_id, ['charts:read'])).secret_key;
    const today = new Date().toISOString().slice(0, 10);
    const active = async (mode: string) => {
      const r = await api(`/charts/active_subscriptions?from=${today}&to=${today}&mode=${mode}`, charts);
      expect(r.status).toBe(200);
      return (r.body.series[0]?.values.at(-1) ?? 0) as number;
    };
    const liveBefore = await active('live');
    const token = await buy('sb_a');
    await register('sb_a', token);
    expect((await register('sb_b', token)).body.is_premium).toBe(true);
    const [t] = (await api('/transfers?app_user_id=sb_b', writer)).body.data;
    expect(t).toMatchObject({ status: 'completed', is_sandbox: true });
    expect(await testDb()('entitlements').where({ tenant_id: s.tenant.tenant_id, app_user_id: 'sb_b' })).toEqual([
      expect.objectContaining({ is_sandbox: true }),
    ]);
    expect((await s.subscriber('sb_b', s.pkLive)).body).toMatchObject({ is_premium: false, entitlements: [] });
    expect(await active('live')).toBe(liveBefore);
    expect(await active('test')).toBeGreaterThanOrEqual(1);
  });

  it('a transfer racing a renewal, then one racing a refund: the store writes for whoever holds the purchase when it lands', async () => {
    await settings({ restore_behavior: 'transfer', undo_hours: 1 });
    const token = await buy('race_a');
    await register('race_a', token);
    const [moved, renewal] = await Promise.all([register('race_b', token), rtdn('SUBSCRIPTION_RENEWED', token)]);
    expect(moved.status).toBe(200);
    await processed(renewal.id);
    const afterRenewal = await purchaseRows(token);
    expect(afterRenewal.holder).toBe('race_b');
    expect(afterRenewal.entitlements).toEqual([{ app_user_id: 'race_b', state: 'active' }]);

    // The refund lands while the receiver restores it back (the tenant's policy moves it again).
    await s.control.store_android('POST', '/void', { purchase_token: token, account: s.accounts.store_android });
    const [back, refund] = await Promise.all([register('race_a', token), rtdn('VOIDED_PURCHASE', token)]);
    await processed(refund.id);
    const after = await purchaseRows(token);
    // Whoever holds it when the dust settles holds it revoked; nobody else holds any of it.
    expect(after.entitlements).toEqual([{ app_user_id: after.holder, state: 'revoked' }]);
    expect([await premium('race_a'), await premium('race_b')]).toEqual([false, false]);
    // A registration of a refunded purchase moves nothing premium: refused, or answered not entitled.
    if (back.status === 200) expect(back.body.is_premium).toBe(false);
    else expect(back.status).toBeGreaterThanOrEqual(400);
  });
});
