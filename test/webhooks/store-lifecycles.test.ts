import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACKNOWLEDGEMENT_WINDOW_DAYS } from '../../domain/store-purchase';
import { playConnectionsOfAllTenants } from '../../db/voided-sweep-targets';
import { startVoidedPurchaseSweep } from '../../temporal/workflow-starts';
import { appDb, testDb } from '../helpers/db';
import { newTenant } from '../helpers/api';
import { startStoreStack, type StoreStack } from '../helpers/stores';
import { until } from '../helpers/until';

/**
 * Store lifecycles end to end (docs/lifecycles.md, "Store purchases"): each event sent by the
 * emulator in its store's real shape (POST /__control/events), through the receiver and the
 * notification workflow's re-read, to what GET /v1/sdk/subscribers/{id} answers.
 */
describe('store lifecycles → GET /v1/sdk/subscribers/{id}', () => {
  let s: StoreStack;
  const target = (p: 'store_android' | 'store_ios') => `${s.api.dashboardRoot}/api/webhooks/${p}`;
  const delivery = (provider: string, id: string) =>
    testDb()('webhook_deliveries').where({ provider, event_id: id }).first();
  const processed = (provider: string, id: string) =>
    until(
      `${provider} ${id} processed`,
      () => delivery(provider, id),
      (d) => d?.status === 'processed' || d?.status === 'failed',
    );
  const premium = (r: { body: { entitlements: { is_active: boolean; sku: string }[] } }) =>
    r.body.entitlements.filter((e) => e.is_active);

  beforeAll(async () => {
    s = await startStoreStack('store-lifecycles');
    await testDb()('products').insert({
      tenant_id: s.tenant.tenant_id,
      sku: 'premium_yearly',
      name: 'Premium yearly',
      tier: 'annual',
      android_store_product_id: 'premium_yearly',
      ios_store_product_id: 'premium_yearly',
    });
  });
  afterAll(async () => s?.close());

  describe('Google Play', () => {
    const rtdn = (type: string, data: Record<string, unknown>) =>
      s.control.store_android<{ id: string; status: number }>('POST', '/events', {
        type,
        target: target('store_android'),
        account: s.accounts.store_android,
        data,
      });
    const buy = async (user: string, product = 'premium_monthly', extra: Record<string, unknown> = {}) =>
      (
        await s.control.store_android<{ purchase_token: string }>('POST', '/sandbox-purchase', {
          product_id: product,
          account: s.accounts.store_android,
          app_user_id: user,
          ...extra,
        })
      ).purchase_token;
    const register = (user: string, token: string, product = 'premium_monthly') =>
      s.register({ app_user_id: user, provider: 'store_android', product_id: product, purchase_token: token });
    const sent = async (type: string, token: string) => {
      const e = await rtdn(type, { purchaseToken: token });
      expect(e.status).toBe(200);
      expect(await processed('store_android', e.id)).toMatchObject({ status: 'processed' });
    };

    it('linkedPurchaseToken: upgrade, downgrade and resubscribe each supersede the old purchase — one entitlement throughout, never zero, never two', async () => {
      const user = 'play_switch';
      const a = await buy(user);
      expect((await register(user, a)).body).toMatchObject({ is_premium: true });
      // Every answer seen while a switch is processed grants exactly one entitlement.
      const watch = async (label: string, done: (r: any) => boolean) => {
        const seen: number[] = [];
        const r = await until(
          label,
          async () => {
            const x = await s.subscriber(user);
            seen.push(premium(x).length);
            return x;
          },
          done,
        );
        expect(new Set(seen)).toEqual(new Set([1]));
        return r;
      };
      const only = (sku: string) => (r: any) =>
        premium(r).length === 1 && premium(r)[0].sku === sku && r.body.entitlements.length === 1;

      // Upgrade: Play issues a new token naming the old one; its notification arrives before the app registers it.
      const b = await buy(user, 'premium_yearly', { linked_purchase_token: a });
      await sent('SUBSCRIPTION_PURCHASED', b);
      await watch('the upgrade', only('premium_yearly'));
      // The replaced purchase's own (late) notification changes nothing for the user.
      await sent('SUBSCRIPTION_EXPIRED', a);
      expect((await register(user, b, 'premium_yearly')).body.entitlements).toEqual([
        expect.objectContaining({ sku: 'premium_yearly', state: 'active' }),
      ]);
      await watch('after the old one expired', only('premium_yearly'));

      // Downgrade: this time the app registers the new token first.
      const c = await buy(user, 'premium_monthly', { linked_purchase_token: b });
      expect((await register(user, c)).body.entitlements).toEqual([
        expect.objectContaining({ sku: 'premium_monthly', state: 'active' }),
      ]);
      await sent('SUBSCRIPTION_PURCHASED', c);
      await watch('the downgrade', only('premium_monthly'));

      // Resubscribe after a cancellation: same product, a new token.
      await sent('SUBSCRIPTION_CANCELED', c);
      const d = await buy(user, 'premium_monthly', { linked_purchase_token: c });
      await sent('SUBSCRIPTION_PURCHASED', d);
      await sent('SUBSCRIPTION_EXPIRED', c);
      const final = await watch('the resubscribe', only('premium_monthly'));
      expect(final.body.is_premium).toBe(true);
      const rows = await testDb()('subscriptions')
        .where({ tenant_id: s.tenant.tenant_id, provider: 'store_android', app_user_id: user })
        .orderBy('created_at')
        .select('status', 'superseded_by');
      expect(rows.map((r) => r.status)).toEqual(['expired', 'expired', 'expired', 'active']);
      expect(rows.slice(0, 3).every((r) => r.superseded_by)).toBe(true);
    });

    it('a voided-purchase notification revokes at once', async () => {
      const token = await buy('play_void');
      await register('play_void', token);
      const e = await rtdn('VOIDED_PURCHASE', { purchaseToken: token });
      expect(e.status).toBe(200);
      const r = await until(
        'revoked',
        () => s.subscriber('play_void'),
        (x) => x.body.entitlements?.[0]?.state === 'revoked',
      );
      expect(r.body.is_premium).toBe(false);
      expect(await delivery('store_android', e.id)).toMatchObject({
        event_type: 'VOIDED_PURCHASE',
        status: 'processed',
      });
    });

    it('the Voided Purchases API revokes a void whose notification never came (the sweep started for every Play connection)', async () => {
      const token = await buy('play_void_api');
      await register('play_void_api', token);
      await s.control.store_android('POST', '/void', { purchase_token: token, account: s.accounts.store_android });
      // No RTDN was sent: the entitlement still says what the last read said.
      expect((await s.subscriber('play_void_api')).body).toMatchObject({ is_premium: true });
      const targets = await playConnectionsOfAllTenants(appDb());
      const mine = targets.find((t) => t.tenantId === s.tenant.tenant_id);
      expect(mine).toBeDefined();
      // Another tenant's sweep naming this connection reads nothing of it (the connection is looked up as that tenant).
      const other = await newTenant('void-other');
      const foreign = await startVoidedPurchaseSweep(
        s.worker.client,
        s.worker.taskQueue,
        other.tenant_id,
        mine!.connectionId,
      );
      try {
        await until(
          'the foreign round to finish',
          async () => (await foreign.fetchHistory()).events ?? [],
          (evs) => evs.some((e) => e.timerStartedEventAttributes),
        );
        expect((await s.subscriber('play_void_api')).body).toMatchObject({ is_premium: true });
        // Nothing was re-read or written under the other tenant either.
        expect(await testDb()('subscriptions').where({ tenant_id: other.tenant_id }).select('id')).toEqual([]);
        const scheduled = ((await foreign.fetchHistory()).events ?? [])
          .filter((e) => e.activityTaskScheduledEventAttributes)
          .map((e) => e.activityTaskScheduledEventAttributes!.activityType!.name);
        expect(scheduled).toEqual(['listVoidedStorePurchases']);
      } finally {
        await foreign.terminate('test over');
      }
      const handle = await startVoidedPurchaseSweep(
        s.worker.client,
        s.worker.taskQueue,
        mine!.tenantId,
        mine!.connectionId,
      );
      try {
        const r = await until(
          'revoked by the sweep',
          () => s.subscriber('play_void_api'),
          (x) => x.body.entitlements?.[0]?.state === 'revoked',
          30_000,
        );
        expect(r.body.is_premium).toBe(false);
        // Starting it again (the next api start) finds the same sweep running.
        expect(
          (await startVoidedPurchaseSweep(s.worker.client, s.worker.taskQueue, mine!.tenantId, mine!.connectionId))
            .firstExecutionRunId,
        ).toBe(handle.firstExecutionRunId);
      } finally {
        await handle.terminate('test over');
      }
    });

    it('grace period (premium), account hold and paused (not premium), recovery, then expiry', async () => {
      const user = 'play_states';
      const token = await buy(user);
      await register(user, token);
      const state = async () => (await s.subscriber(user)).body;
      for (const [type, want, isPremium] of [
        ['SUBSCRIPTION_IN_GRACE_PERIOD', 'grace_period', true],
        ['SUBSCRIPTION_RECOVERED', 'active', true],
        ['SUBSCRIPTION_ON_HOLD', 'expired', false],
        ['SUBSCRIPTION_RECOVERED', 'active', true],
        ['SUBSCRIPTION_PAUSED', 'expired', false],
        ['SUBSCRIPTION_RESTARTED', 'active', true],
        ['SUBSCRIPTION_EXPIRED', 'expired', false],
      ] as const) {
        await sent(type, token);
        expect([type, await state()]).toEqual([
          type,
          expect.objectContaining({ is_premium: isPremium, entitlements: [expect.objectContaining({ state: want })] }),
        ]);
      }
    });

    it('acknowledgement within the 3-day window: a purchase known only from its notification is acknowledged; one never acknowledged is refunded by Play', async () => {
      // Both bought just under three days ago and never registered by the app.
      const windowEnd = Date.now() + 15_000;
      const startTime = new Date(windowEnd - ACKNOWLEDGEMENT_WINDOW_DAYS * 86_400_000).toISOString();
      const made = (user: string) =>
        s.control.store_android<{ purchase_token: string }>('POST', '/purchases', {
          product_id: 'premium_monthly',
          account: s.accounts.store_android,
          app_user_id: user,
          test: true,
          start_time: startTime,
        });
      const { purchase_token: notified } = await made('ack_notified');
      const { purchase_token: silent } = await made('ack_silent');
      await sent('SUBSCRIPTION_PURCHASED', notified);
      const playRow = async (t: string) =>
        (await s.control.store_android('GET', '/state')).purchases.find((p: any) => p.token === t);
      expect(
        await until(
          'acknowledged at Play',
          () => playRow(notified),
          (p) => p.acknowledged === true,
        ),
      ).toMatchObject({ acknowledged: true });
      expect((await playRow(silent)).acknowledged).toBe(false);
      // Past the third day (the clock itself is the condition), Play has refunded only the unacknowledged one.
      await until(
        'the window to close',
        async () => Date.now(),
        (t) => t > windowEnd + 1000,
        30_000,
      );
      expect((await register('ack_notified', notified)).body).toMatchObject({
        is_premium: true,
        entitlements: [expect.objectContaining({ state: 'active' })],
      });
      expect((await register('ack_silent', silent)).body).toMatchObject({
        is_premium: false,
        entitlements: [expect.objectContaining({ state: 'expired' })],
      });
    });
  });

  describe('App Store', () => {
    const assn = (type: string, extra: Record<string, unknown> = {}) =>
      s.control.store_ios<{ id: string; status: number; family?: { id: string; status: number }[] }>(
        'POST',
        '/events',
        { type, target: target('store_ios'), account: s.accounts.store_ios, ...extra },
      );
    const buy = async (user: string) => {
      const bought = await s.control.store_ios<{ transaction_id: string; signed_transaction: string }>(
        'POST',
        '/sandbox-purchase',
        { product_id: 'premium_monthly', account: s.accounts.store_ios, app_user_id: user },
      );
      expect(
        (await s.register({ app_user_id: user, provider: 'store_ios', signed_transaction: bought.signed_transaction }))
          .body,
      ).toMatchObject({ is_premium: true });
      return bought.transaction_id;
    };
    const sent = async (type: string, extra: Record<string, unknown>) => {
      const e = await assn(type, extra);
      expect(e.status).toBe(200);
      expect(await processed('store_ios', e.id)).toMatchObject({ status: 'processed' });
      return e;
    };

    it('DID_FAIL_TO_RENEW/GRACE_PERIOD → grace (premium, to Apple’s grace end); GRACE_PERIOD_EXPIRED → expired; DID_RENEW recovers; EXPIRED ends it', async () => {
      const user = 'ios_states';
      const originalTransactionId = await buy(user);
      await sent('DID_FAIL_TO_RENEW', { subtype: 'GRACE_PERIOD', data: { originalTransactionId } });
      const grace = (await s.subscriber(user)).body;
      expect(grace).toMatchObject({
        is_premium: true,
        entitlements: [expect.objectContaining({ state: 'grace_period' })],
      });
      expect(Date.parse(grace.entitlements[0].grace_until)).toBeGreaterThan(Date.now() + 15 * 86_400_000);
      await sent('GRACE_PERIOD_EXPIRED', { data: { originalTransactionId } });
      expect((await s.subscriber(user)).body).toMatchObject({
        is_premium: false,
        entitlements: [expect.objectContaining({ state: 'expired' })],
      });
      await sent('DID_RENEW', { data: { originalTransactionId } });
      expect((await s.subscriber(user)).body).toMatchObject({
        is_premium: true,
        entitlements: [expect.objectContaining({ state: 'active' })],
      });
      await sent('EXPIRED', { subtype: 'VOLUNTARY', data: { originalTransactionId } });
      expect((await s.subscriber(user)).body).toMatchObject({
        is_premium: false,
        entitlements: [expect.objectContaining({ state: 'expired' })],
      });
    });

    it('REVOKE revokes at once', async () => {
      const originalTransactionId = await buy('ios_revoke');
      await sent('REVOKE', { data: { originalTransactionId } });
      expect((await s.subscriber('ios_revoke')).body).toMatchObject({
        is_premium: false,
        entitlements: [expect.objectContaining({ state: 'revoked' })],
      });
    });

    it('DID_CHANGE_RENEWAL_PREF: an upgrade switches the product at once; a downgrade at the next renewal — one entitlement each time', async () => {
      const user = 'ios_pref';
      const originalTransactionId = await buy(user);
      const skus = async () => (await s.subscriber(user)).body.entitlements.map((e: any) => [e.sku, e.state]);
      await sent('DID_CHANGE_RENEWAL_PREF', {
        subtype: 'UPGRADE',
        data: { originalTransactionId, productId: 'premium_yearly' },
      });
      expect(await skus()).toEqual([['premium_yearly', 'active']]);
      await sent('DID_CHANGE_RENEWAL_PREF', {
        subtype: 'DOWNGRADE',
        data: { originalTransactionId, productId: 'premium_monthly' },
      });
      expect(await skus()).toEqual([['premium_yearly', 'active']]);
      await sent('DID_RENEW', { data: { originalTransactionId } });
      expect(await skus()).toEqual([['premium_monthly', 'active']]);
    });

    it('Family Sharing: the shared transaction grants the family member’s app user, and the purchaser’s refund revokes both', async () => {
      const originalTransactionId = await buy('fam_parent');
      const shared = await s.control.store_ios<{ transaction_id: string; signed_transaction: string }>(
        'POST',
        '/family-share',
        { original_transaction_id: originalTransactionId, account: s.accounts.store_ios },
      );
      const member = await s.register({
        app_user_id: 'fam_kid',
        provider: 'store_ios',
        signed_transaction: shared.signed_transaction,
      });
      expect(member.body).toMatchObject({
        is_premium: true,
        entitlements: [expect.objectContaining({ state: 'active' })],
      });
      // Someone outside the family cannot register the purchaser's own transaction.
      const parentTx = (await s.control.store_ios('GET', '/state')).transactions.find(
        (t: any) => t.transactionId === originalTransactionId,
      );
      expect(parentTx.inAppOwnershipType).toBe('PURCHASED');

      const refund = await assn('REFUND', { data: { originalTransactionId } });
      expect(refund.status).toBe(200);
      expect(refund.family).toEqual([expect.objectContaining({ status: 200 })]);
      await until(
        'the purchaser revoked',
        () => s.subscriber('fam_parent'),
        (r) => r.body.entitlements?.[0]?.state === 'revoked',
      );
      const kid = await until(
        'the family member revoked',
        () => s.subscriber('fam_kid'),
        (r) => r.body.entitlements?.[0]?.state === 'revoked',
      );
      expect(kid.body.is_premium).toBe(false);
      expect(await delivery('store_ios', refund.family![0].id)).toMatchObject({
        event_type: 'REVOKE',
        status: 'processed',
      });
    });
  });
  /**
   * The App Store verification path against Apple's published behaviour (the official
   * SignedDataVerifier's VerificationStatus): a notification signed by a chain that does not end
   * at a configured root, one for another app, one with no x5c header and one whose payload was
   * altered are each refused 400 and listed as failed with the reason; a genuine one is accepted.
   */
  describe('App Store notification verification', () => {
    let originalTransactionId: string;
    const post = (body: string) =>
      fetch(target('store_ios'), { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const parts = (jws: string) => jws.split('.');
    const reasons = async () =>
      (
        await testDb()('webhook_deliveries')
          .where({ provider: 'store_ios', status: 'failed' })
          .orderBy('created_at', 'desc')
          .select('reason')
      ).map((r) => r.reason as string);
    const genuine = async () => {
      const e = await s.control.store_ios<{ id: string; status: number }>('POST', '/events', {
        type: 'DID_RENEW',
        target: target('store_ios'),
        account: s.accounts.store_ios,
        data: { originalTransactionId },
      });
      const stored = s.emulators.store_ios.store.find('notifications', (n) => n.id === e.id) as {
        signedPayload: string;
      };
      return { ...e, signedPayload: stored.signedPayload };
    };

    beforeAll(async () => {
      const bought = await s.control.store_ios<{ transaction_id: string; signed_transaction: string }>(
        'POST',
        '/sandbox-purchase',
        { product_id: 'premium_monthly', account: s.accounts.store_ios, app_user_id: 'ios_verify' },
      );
      originalTransactionId = bought.transaction_id;
      await s.register({
        app_user_id: 'ios_verify',
        provider: 'store_ios',
        signed_transaction: bought.signed_transaction,
      });
    });

    it('a genuine notification is accepted and processed', async () => {
      const g = await genuine();
      expect(g.status).toBe(200);
      expect(await processed('store_ios', g.id)).toMatchObject({ status: 'processed' });
    });

    it('a chain that does not end at a configured root is refused', async () => {
      const bad = await s.control.store_ios<{ id: string; status: number }>('POST', '/events', {
        type: 'DID_RENEW',
        target: target('store_ios'),
        account: s.accounts.store_ios,
        data: { originalTransactionId },
        signature: 'bad',
      });
      expect(bad.status).toBe(400);
      expect((await reasons())[0]).toMatch(/JWS verification failed \(VERIFICATION_FAILURE\)/);
    });

    it('a notification whose signed transaction is for another bundle id is refused (INVALID_APP_IDENTIFIER)', async () => {
      const other = await s.control.store_ios<{ id: string; status: number }>('POST', '/events', {
        type: 'DID_RENEW',
        target: target('store_ios'),
        account: s.accounts.store_ios,
        data: { originalTransactionId, transaction: { bundleId: 'com.example.someone-else' } },
      });
      expect(other.status).toBe(400);
      expect((await reasons())[0]).toMatch(/INVALID_APP_IDENTIFIER/);
      expect(await delivery('store_ios', other.id)).toBeUndefined();
    });

    it('a notification naming a bundle id no one connected is refused', async () => {
      const other = await s.control.store_ios<{ id: string; status: number }>('POST', '/events', {
        type: 'DID_RENEW',
        target: target('store_ios'),
        account: s.accounts.store_ios,
        data: { originalTransactionId, bundleId: 'com.example.not-connected' },
      });
      expect(other.status).toBe(400);
    });

    // The library throws INVALID_CHAIN_LENGTH for a chain that is not 3 certificates long, inside the
    // block that reports every header problem as INVALID_CERTIFICATE (jws_verification.js), which is what callers see.
    it('a JWS without an x5c header is refused (INVALID_CERTIFICATE)', async () => {
      const [h, p, sig] = parts((await genuine()).signedPayload);
      const { x5c: _drop, ...header } = JSON.parse(Buffer.from(h, 'base64url').toString());
      const res = await post(JSON.stringify({ signedPayload: `${b64(header)}.${p}.${sig}` }));
      expect(res.status).toBe(400);
      expect((await res.json()).error).toBe('webhook_refused');
      expect((await reasons())[0]).toMatch(/INVALID_CERTIFICATE/);
    });

    it('an altered payload under the original signature is refused (VERIFICATION_FAILURE); the original bytes are still accepted', async () => {
      const g = await genuine();
      const [h, p, sig] = parts(g.signedPayload);
      const payload = JSON.parse(Buffer.from(p, 'base64url').toString());
      const altered = { ...payload, notificationType: 'REFUND', notificationUUID: crypto.randomUUID() };
      const res = await post(JSON.stringify({ signedPayload: `${h}.${b64(altered)}.${sig}` }));
      expect(res.status).toBe(400);
      expect((await reasons())[0]).toMatch(/VERIFICATION_FAILURE/);
      expect(await delivery('store_ios', altered.notificationUUID)).toBeUndefined();
      expect((await s.subscriber('ios_verify')).body).toMatchObject({ is_premium: true });
      expect((await post(JSON.stringify({ signedPayload: g.signedPayload }))).status).toBe(200);
    });
  });
});
