import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDb } from '../helpers/db';
import { call, newTenant, refill, startApi } from '../helpers/api';
import { createProvenConnection } from '../helpers/connections';
import { withTenant } from '../../db/tenant-tx';
import { createEmulatorAccount } from '../../seed/demo-providers';
import { createAdapters } from '../../providers';
import { startStoreStack, type StoreStack } from '../helpers/stores';
import { until } from '../helpers/until';
import { appAccountTokenFor } from '../../providers/store_ios/app-account-token';
import { storeNotificationWorkflowId } from '../../temporal/workflow-starts';

/**
 * Play RTDN (Pub/Sub push, OIDC bearer) and App Store Server Notifications V2 (signed JWS)
 * through the dashboard host's receiver: verified, stored redacted (one row per notification
 * id), then a workflow re-reads the purchase at the store and writes what the store says.
 */
describe('store notifications', () => {
  let s: StoreStack;
  const target = (p: 'store_android' | 'store_ios') => `${s.api.dashboardRoot}/api/webhooks/${p}`;
  const delivery = (provider: string, id: string) =>
    testDb()('webhook_deliveries').where({ provider, event_id: id }).first();
  const entitlement = (user: string, provider: string) =>
    testDb()('entitlements').where({ tenant_id: s.tenant.tenant_id, app_user_id: user, provider }).first();
  const processed = (provider: string, id: string) =>
    until(
      `${provider} ${id} processed`,
      () => delivery(provider, id),
      (d) => d?.status === 'processed' || d?.status === 'failed',
    );

  beforeAll(async () => {
    s = await startStoreStack('store-hooks');
  });
  afterAll(async () => s?.close());

  describe('Play RTDN', () => {
    let token: string;
    const rtdn = (type: string, extra: Record<string, unknown> = {}) =>
      s.control.store_android<{ id: string; status: number }>('POST', '/events', {
        type,
        target: target('store_android'),
        account: s.accounts.store_android,
        ...extra,
      });

    beforeAll(async () => {
      ({ purchase_token: token } = await s.control.store_android('POST', '/sandbox-purchase', {
        product_id: 'premium_monthly',
        account: s.accounts.store_android,
        app_user_id: 'rtdn_user',
      }));
      expect(
        (
          await s.register({
            app_user_id: 'rtdn_user',
            provider: 'store_android',
            product_id: 'premium_monthly',
            purchase_token: token,
          })
        ).status,
      ).toBe(200);
    });

    it('a renewal is accepted, stored redacted, and re-read: the entitlement runs to the store’s new expiry', async () => {
      const before = await entitlement('rtdn_user', 'store_android');
      const sent = await rtdn('SUBSCRIPTION_RENEWED', { data: { purchaseToken: token } });
      expect(sent.status).toBe(200);
      const d = await processed('store_android', sent.id);
      expect(d).toMatchObject({
        status: 'processed',
        event_type: 'SUBSCRIPTION_RENEWED',
        mode: 'test',
        tenant_id: s.tenant.tenant_id,
      });
      expect(JSON.stringify(d.payload)).not.toContain(token);
      const after = await entitlement('rtdn_user', 'store_android');
      expect(after.state).toBe('active');
      expect(after.expires_at.getTime()).toBeGreaterThan(before.expires_at.getTime());
      const purchase = (await s.control.store_android('GET', '/state')).purchases.find((p: any) => p.token === token);
      expect(after.expires_at.toISOString()).toBe(purchase.expiryTime);
    });

    it('the same notification ten times is one row with a counter', async () => {
      const first = await rtdn('SUBSCRIPTION_RECOVERED', { data: { purchaseToken: token } });
      await processed('store_android', first.id);
      for (let i = 0; i < 9; i++) expect((await rtdn('SUBSCRIPTION_RECOVERED', { id: first.id })).status).toBe(200);
      const rows = await testDb()('webhook_deliveries').where({ provider: 'store_android', event_id: first.id });
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ delivery_count: 10, status: 'processed' });
    });

    it('a revocation the store confirms revokes at once; the subscription is refunded', async () => {
      const sent = await rtdn('SUBSCRIPTION_REVOKED', { data: { purchaseToken: token } });
      expect(sent.status).toBe(200);
      await until(
        'revoked',
        () => s.subscriber('rtdn_user'),
        (r) => r.body.entitlements?.[0]?.state === 'revoked',
      );
      expect((await s.subscriber('rtdn_user')).body.is_premium).toBe(false);
      expect(
        await testDb()('subscriptions')
          .where({ tenant_id: s.tenant.tenant_id, provider: 'store_android', app_user_id: 'rtdn_user' })
          .first(),
      ).toMatchObject({ status: 'refunded' });
      // A later re-read (Play says EXPIRED) keeps it revoked.
      expect(
        (
          await s.register({
            app_user_id: 'rtdn_user',
            provider: 'store_android',
            product_id: 'premium_monthly',
            purchase_token: token,
          })
        ).body.entitlements[0].state,
      ).toBe('revoked');
    });

    it('a properly signed push naming a token Play does not know is accepted, then failed by the re-read; nothing is granted', async () => {
      const sent = await rtdn('SUBSCRIPTION_PURCHASED', {
        data: { purchaseToken: 'forged-token-never-issued', subscriptionId: 'premium_monthly' },
      });
      expect(sent.status).toBe(200);
      const d = await processed('store_android', sent.id);
      expect(d).toMatchObject({ status: 'failed', reason: expect.stringMatching(/purchase_not_found/) });
      expect(
        Number(
          (await testDb()('subscriptions')
            .where({ tenant_id: s.tenant.tenant_id, provider: 'store_android' })
            .count({ n: '*' })
            .first())!.n,
        ),
      ).toBe(1);
    });

    it('Play failing while a push arrives: accepted, the re-read retries, and the purchase is written once Play answers', async () => {
      const { purchase_token } = await s.control.store_android('POST', '/sandbox-purchase', {
        product_id: 'premium_monthly',
        account: s.accounts.store_android,
        app_user_id: 'late_user',
      });
      await s.control.store_android('POST', '/faults', { mode: 'error', status: 503, route: '/androidpublisher/' });
      let sent: { id: string; status: number };
      try {
        sent = await rtdn('SUBSCRIPTION_PURCHASED', { data: { purchaseToken: purchase_token } });
        expect(sent.status).toBe(200);
        const handle = s.worker.client.workflow.getHandle(
          storeNotificationWorkflowId(s.tenant.tenant_id, 'store_android', sent.id),
        );
        // Started by the outbox dispatcher just after the 200: not found until then.
        await until(
          'a failed re-read being retried',
          async () => (await handle.describe().catch(() => null))?.raw.pendingActivities?.[0]?.attempt ?? 0,
          (n) => n >= 2,
        );
        expect((await delivery('store_android', sent.id)).status).toBe('received');
      } finally {
        await s.control.store_android('DELETE', '/faults');
      }
      expect(await processed('store_android', sent.id)).toMatchObject({ status: 'processed' });
      // Held for the buyer Play names until that app user registers it.
      expect(await entitlement('late_user', 'store_android')).toMatchObject({ state: 'active', is_sandbox: true });
    });

    it('Temporal unreachable: 200 once the delivery and its outbox row are stored; drained when a dispatcher can reach Temporal', async () => {
      const { Client, Connection } = await import('@temporalio/client');
      const dead = Connection.lazy({ address: '127.0.0.1:1', connectTimeout: 500 });
      // A task queue of its own, so only this api's dispatcher (which cannot reach Temporal) sees the row at first.
      const cutConfig = { ...s.worker.config, taskQueue: `${s.worker.taskQueue}-cut` };
      const cut = await startApi({
        config: cutConfig,
        vault: s.worker.vault,
        adapters: createAdapters(s.worker.config),
        temporal: { connection: dead, client: new Client({ connection: dead }) },
      });
      const { purchase_token } = await s.control.store_android('POST', '/sandbox-purchase', {
        product_id: 'premium_monthly',
        account: s.accounts.store_android,
        app_user_id: 'cut_user',
      });
      let first: { id: string; status: number };
      try {
        first = await s.control.store_android<{ id: string; status: number }>('POST', '/events', {
          type: 'SUBSCRIPTION_PURCHASED',
          target: `${cut.dashboardRoot}/api/webhooks/store_android`,
          account: s.accounts.store_android,
          data: { purchaseToken: purchase_token },
        });
        expect(first.status).toBe(200);
        const stored = await delivery('store_android', first.id);
        expect(stored).toMatchObject({ status: 'received', delivery_count: 1 });
        const queued = await until(
          'the dispatcher to have tried',
          () => testDb()('webhook_outbox').where({ delivery_id: stored.id }).first(),
          (r) => !!r?.last_error,
        );
        // Temporal away is not the row's fault: no attempt spent.
        expect(queued).toMatchObject({ attempts: 0, task_queue: cutConfig.taskQueue });
      } finally {
        await cut.close();
      }
      // The same queue served by a process that reaches Temporal: the row drains with no redelivery.
      await testDb()('webhook_outbox')
        .where({ task_queue: cutConfig.taskQueue })
        .update({ task_queue: s.worker.taskQueue, next_attempt_at: testDb().fn.now() });
      expect(await processed('store_android', first.id)).toMatchObject({ status: 'processed', delivery_count: 1 });
      expect(await entitlement('cut_user', 'store_android')).toMatchObject({ state: 'active' });
    });

    it('a push with a bad OIDC token or an unknown package is refused (400) and listed as failed', async () => {
      const bad = await rtdn('SUBSCRIPTION_CANCELED', { data: { purchaseToken: token }, signature: 'bad' });
      expect(bad.status).toBe(400);
      const data = Buffer.from(
        JSON.stringify({
          version: '1.0',
          packageName: 'com.nobody.app',
          eventTimeMillis: String(Date.now()),
          subscriptionNotification: { notificationType: 3, purchaseToken: 'x' },
        }),
      ).toString('base64');
      const unknown = await fetch(target('store_android'), {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer x.y.z' },
        body: JSON.stringify({ message: { data, messageId: '99' } }),
      });
      expect(unknown.status).toBe(400);
      expect((await unknown.json()).error).toBe('webhook_refused');
      await refill(s.tenant.tenant_id);
      const failed = await call(s.api.apiUrl, '/webhooks?provider=store_android&status=failed', s.tenant.secret_key);
      expect(failed.body.data.some((d: any) => /OIDC/.test(d.reason))).toBe(true);
      // Kept for operators under no tenant, with our reason and never the sender's words (the package name it claimed).
      const orphans = await testDb()('webhook_deliveries')
        .where({ provider: 'store_android', status: 'failed' })
        .whereNull('tenant_id');
      expect(orphans.some((o: any) => o.reason === 'the account is not connected')).toBe(true);
      expect(JSON.stringify(orphans)).not.toContain('com.nobody.app');
      // The cancel never landed: the entitlement is as the revocation left it.
      expect((await entitlement('rtdn_user', 'store_android')).state).toBe('revoked');
    });

    it('a new purchase of the same product grants again, and a late notification about the old one does not take it away', async () => {
      const { purchase_token: second } = await s.control.store_android('POST', '/sandbox-purchase', {
        product_id: 'premium_monthly',
        account: s.accounts.store_android,
        app_user_id: 'rtdn_user',
      });
      const r = await s.register({
        app_user_id: 'rtdn_user',
        provider: 'store_android',
        product_id: 'premium_monthly',
        purchase_token: second,
      });
      expect(r.body).toMatchObject({ is_premium: true, entitlements: [expect.objectContaining({ state: 'active' })] });
      const late = await rtdn('SUBSCRIPTION_EXPIRED', { data: { purchaseToken: token } });
      expect(await processed('store_android', late.id)).toMatchObject({ status: 'processed' });
      expect((await s.subscriber('rtdn_user')).body).toMatchObject({
        is_premium: true,
        entitlements: [expect.objectContaining({ state: 'active' })],
      });
      // The old purchase's own record still says what Play says about it.
      expect(
        await testDb()('subscriptions')
          .where({ tenant_id: s.tenant.tenant_id, provider: 'store_android', app_user_id: 'rtdn_user' })
          .orderBy('created_at')
          .select('status'),
      ).toEqual([{ status: 'refunded' }, { status: 'active' }]);
    });
  });

  describe('App Store Server Notifications V2', () => {
    let originalTransactionId: string;
    const assn = (type: string, extra: Record<string, unknown> = {}) =>
      s.control.store_ios<{ id: string; status: number }>('POST', '/events', {
        type,
        target: target('store_ios'),
        account: s.accounts.store_ios,
        ...extra,
      });

    beforeAll(async () => {
      const bought = await s.control.store_ios('POST', '/sandbox-purchase', {
        product_id: 'premium_monthly',
        account: s.accounts.store_ios,
        app_user_id: 'assn_user',
      });
      originalTransactionId = bought.transaction_id;
      expect(
        (
          await s.register({
            app_user_id: 'assn_user',
            provider: 'store_ios',
            signed_transaction: bought.signed_transaction,
          })
        ).status,
      ).toBe(200);
    });

    it('a renewal is re-read from the Server API: the expiry is the store’s, not the one the notification body claims', async () => {
      const before = await entitlement('assn_user', 'store_ios');
      const claimed = Date.parse('2099-01-01T00:00:00Z');
      const sent = await assn('DID_RENEW', { data: { originalTransactionId, transaction: { expiresDate: claimed } } });
      expect(sent.status).toBe(200);
      expect(await processed('store_ios', sent.id)).toMatchObject({
        status: 'processed',
        mode: 'test',
        event_type: 'DID_RENEW',
      });
      const after = await entitlement('assn_user', 'store_ios');
      expect(after.state).toBe('active');
      expect(after.expires_at.getTime()).toBeGreaterThan(before.expires_at.getTime());
      expect(after.expires_at.getTime()).toBeLessThan(claimed);
    });

    it('a refund revokes the entitlement at once', async () => {
      const sent = await assn('REFUND', { data: { originalTransactionId } });
      expect(sent.status).toBe(200);
      await until(
        'revoked',
        () => s.subscriber('assn_user'),
        (r) => r.body.entitlements?.[0]?.state === 'revoked',
      );
      expect(
        await testDb()('subscriptions')
          .where({ tenant_id: s.tenant.tenant_id, provider: 'store_ios', external_id: originalTransactionId })
          .first(),
      ).toMatchObject({ status: 'refunded' });
    });

    it('a payload signed outside the trusted roots is refused (400) and listed as failed; a redelivery is one row', async () => {
      const bad = await assn('DID_RENEW', { data: { originalTransactionId }, signature: 'bad' });
      expect(bad.status).toBe(400);
      const row = await testDb()('webhook_deliveries')
        .where({ tenant_id: s.tenant.tenant_id, provider: 'store_ios', status: 'failed' })
        .first();
      expect(row.reason).toMatch(/signature not verified/);
      const test = await assn('TEST');
      expect((await assn('TEST', { id: test.id })).status).toBe(200);
      expect(await delivery('store_ios', test.id)).toMatchObject({ delivery_count: 2, status: 'processed' });
    });

    it('worker down while notifications arrive: both stores’ are accepted and stored, and processed once a worker returns', async () => {
      const ios = await s.control.store_ios('POST', '/sandbox-purchase', {
        product_id: 'premium_monthly',
        account: s.accounts.store_ios,
        app_user_id: 'down_user',
      });
      const android = await s.control.store_android('POST', '/sandbox-purchase', {
        product_id: 'premium_monthly',
        account: s.accounts.store_android,
        app_user_id: 'down_user',
      });
      await s.stopWorker();
      let sent: { id: string; status: number }[];
      try {
        sent = [
          await assn('DID_RENEW', { data: { originalTransactionId: ios.transaction_id } }),
          await s.control.store_android<{ id: string; status: number }>('POST', '/events', {
            type: 'SUBSCRIPTION_RENEWED',
            target: target('store_android'),
            account: s.accounts.store_android,
            data: { purchaseToken: android.purchase_token },
          }),
        ];
        expect(sent.map((x) => x.status)).toEqual([200, 200]);
        expect((await delivery('store_ios', sent[0].id)).status).toBe('received');
        expect((await delivery('store_android', sent[1].id)).status).toBe('received');
      } finally {
        await s.startWorker();
      }
      expect(await processed('store_ios', sent[0].id)).toMatchObject({ status: 'processed' });
      expect(await processed('store_android', sent[1].id)).toMatchObject({ status: 'processed' });
      expect(await entitlement('down_user', 'store_android')).toMatchObject({ state: 'active', is_sandbox: true });
      expect(await entitlement(appAccountTokenFor('down_user'), 'store_ios')).toMatchObject({
        state: 'active',
        is_sandbox: true,
      });
    });

    it('a sandbox notification alone is store evidence: a tenant that never registered a purchase turns test-ready', async () => {
      const t = await newTenant('assn-only');
      const acct = await createEmulatorAccount(s.emulators.store_ios.url);
      await withTenant(testDb(), t.tenant_id, (trx) =>
        createProvenConnection(trx, s.worker.vault, {
          provider: 'store_ios',
          account_ref: acct.account,
          credentials: acct.credentials,
        }),
      );
      const readiness = async () =>
        (await call(s.api.apiUrl, '/readiness', t.secret_key)).body.providers.find(
          (r: any) => r.provider === 'store_ios',
        );
      expect(await readiness()).toMatchObject({ test_ready: false, manual_steps: expect.any(Array) });
      const bought = await s.control.store_ios('POST', '/sandbox-purchase', {
        product_id: 'premium_monthly',
        account: acct.account,
        app_user_id: 'device_user',
        target: target('store_ios'),
      });
      expect(bought.notification.status).toBe(200);
      expect(await until('test-ready', readiness, (r) => r.test_ready === true)).toMatchObject({
        manual_steps: null,
        console_url: null,
      });
    });

    it('a notification before registration is held for the buyer the store names, and moves to the app user who registers it', async () => {
      const bought = await s.control.store_ios('POST', '/sandbox-purchase', {
        product_id: 'premium_monthly',
        account: s.accounts.store_ios,
        app_user_id: 'early_user',
        target: target('store_ios'),
      });
      expect(bought.notification.status).toBe(200);
      const token = appAccountTokenFor('early_user');
      await until(
        'held',
        () => entitlement(token, 'store_ios'),
        (e) => e?.state === 'active',
      );
      const r = await s.register({
        app_user_id: 'early_user',
        provider: 'store_ios',
        signed_transaction: bought.signed_transaction,
      });
      expect(r.body).toMatchObject({ is_premium: true });
      expect(await entitlement(token, 'store_ios')).toBeUndefined();
    });
  });
});
