import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sellOnWebProvider } from '../helpers/connections';
import { startAllEmulators } from '../../emulators/registry';
import type { RunningEmulator } from '../../emulators/common/host';
import { PROVIDERS, type ProviderId } from '../../domain/providers';
import { createAdapters } from '../../providers';
import { startDevServer, type DevServerHandle } from '../../temporal/dev-server';
import { freePort } from '../../runtime/ports';
import { registry } from '../../runtime/metrics';
import { registerProvisionalExpiry } from '../../api/metrics';
import { appDb, testDb } from '../helpers/db';
import { call, newTenant, startApi } from '../helpers/api';
import { startTestWorker } from '../helpers/temporal';
import { until } from '../helpers/until';
import { confirmedPremium } from '../helpers/premium';
import { ENTITLEMENT_CHANNEL, entitlementPayload, listenForEntitlementChanges } from '../../db/entitlement-notify';

/**
 * Provisional access at receipt (docs/provisional-access.md), with real parts: the psp_a emulator's
 * signed checkout events, the receiver, Postgres, and a Temporal dev server this file starts and
 * pauses itself (SIGSTOP; no other file uses it). While the engine is paused no workflow runs, so
 * whatever premium the SDK answers comes from the receipt alone; after SIGCONT the workflow's write
 * supersedes it, and a refund revokes.
 */
describe('provisional access: premium at the webhook, the workflow confirms', () => {
  let temporal: DevServerHandle;
  let paused = false;
  let emulators: Record<ProviderId, RunningEmulator>;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let api: Awaited<ReturnType<typeof startApi>>;
  let t: Awaited<ReturnType<typeof newTenant>>;
  let other: Awaited<ReturnType<typeof newTenant>>;
  let account: string;
  let webhookSecret: string;
  let pk: string;
  let otherPk: string;
  let user1Customer: string;
  const control = async (path: string, body: unknown) =>
    (
      await fetch(`${emulators.psp_a.url}/__control${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    ).json();
  const target = () => `${api.dashboardRoot}/api/webhooks/psp_a`;
  const sdk = (user: string, key = pk, query = '') => call(api.apiRoot, `/v1/sdk/subscribers/${user}${query}`, key);
  const checkout = (user: string) =>
    control('/checkout', {
      sku: 'pro_monthly',
      email: `${user}@example.com`,
      target: target(),
      account,
      mode: 'test',
      app_user_id: user,
    });
  const pause = () => {
    process.kill(temporal.process.pid!, 'SIGSTOP');
    paused = true;
  };
  const resume = () => {
    process.kill(temporal.process.pid!, 'SIGCONT');
    paused = false;
  };
  const publishable = async (tenantId: string) =>
    (await testDb()('apps').where({ tenant_id: tenantId }).first('publishable_key_test'))
      .publishable_key_test as string;
  const grants = (tenantId: string, user: string) =>
    testDb()('provisional_access').where({ tenant_id: tenantId, app_user_id: user, kind: 'grant' }).select('*');

  beforeAll(async () => {
    // A server of this file's own: pausing it stalls nobody else's tests.
    temporal = await startDevServer({ port: await freePort(), uiPort: null });
    emulators = await startAllEmulators(
      { emulatorPorts: {} as never, dataDir: '' },
      { persistent: false, anyPort: true },
    );
    const providerBaseUrls = Object.fromEntries(PROVIDERS.map((p) => [p, emulators[p].url])) as Record<
      ProviderId,
      string
    >;
    worker = await startTestWorker({ config: { providerBaseUrls, temporalAddress: temporal.address } });
    api = await startApi({ config: worker.config, vault: worker.vault, adapters: createAdapters(worker.config) });
    t = await newTenant('provisional');
    other = await newTenant('provisional-other');
    ({ account, webhookSecret } = await sellOnWebProvider({
      emulatorUrl: emulators.psp_a.url,
      vault: worker.vault,
      apiUrl: api.apiUrl,
      tenant: t,
    }));
    pk = await publishable(t.tenant_id);
    otherPk = await publishable(other.tenant_id);
  }, 120_000);
  afterAll(async () => {
    if (paused) resume();
    await api?.close();
    await worker?.stop();
    await Promise.all(Object.values(emulators ?? {}).map((e) => e.close()));
    await temporal?.stop();
  });

  it('with Temporal paused, the buyer is premium as soon as the checkout’s webhooks are answered, and a held wait wakes', async () => {
    pause();
    // Every notification on the channel, as the api's listener gets them.
    const heard: string[] = [];
    const listener = listenForEntitlementChanges(testDb(), {
      onChange: (tenant, hash) => heard.push(`${tenant}:${hash}`),
      onResync: () => {},
    });
    await listener.ready;
    // An SDK wait taken before the purchase: only the receipt's notification can answer it before its timeout.
    const started = Date.now();
    const waiting = sdk('user_1', pk, '?wait_for=premium&timeout_ms=25000');
    const paid = await checkout('user_1');
    expect(paid.events.map((e: { status: number }) => e.status)).toEqual([200, 200, 200]);
    // The three events all grant; only the first changed the answer, so only it woke waiters. Notifications
    // arrive in commit order: once a marker sent after the checkout is heard, every receipt's has been.
    const marker = `${t.tenant_id}:after-checkout`;
    await testDb().raw('select pg_notify(?, ?)', [ENTITLEMENT_CHANNEL, marker]);
    await until(
      'the marker notification',
      async () => heard.includes(marker),
      (v) => v,
    );
    await listener.stop();
    expect(heard.filter((h) => h === entitlementPayload(t.tenant_id, 'user_1'))).toHaveLength(1);
    expect(await grants(t.tenant_id, 'user_1')).toHaveLength(3);
    user1Customer = paid.customer_id;
    // No polling: the first read after the webhooks were answered.
    const first = await sdk('user_1');
    expect(first.body.is_premium).toBe(true);
    expect(first.body.entitlements.length).toBeGreaterThan(0);
    for (const e of first.body.entitlements)
      expect(e).toMatchObject({ source: 'provisional', provider: 'psp_a', sku: 'pro_monthly', is_active: true });
    const woke = await waiting;
    expect(woke.body.is_premium).toBe(true);
    expect(Date.now() - started).toBeLessThan(20_000); // woken by the write, not by its 25 s timeout
    // Nothing was applied: the engine is paused, the outbox holds the hand-overs.
    expect(await testDb()('entitlements').where({ tenant_id: t.tenant_id, app_user_id: 'user_1' })).toEqual([]);
    const deliveries = await grants(t.tenant_id, 'user_1');
    expect(deliveries.every((g) => g.delivery_id && g.state === 'provisional')).toBe(true);

    // The entitlement list and the customer view show it as provisional.
    const list = await call(api.apiUrl, '/entitlements?app_user_id=user_1', t.secret_key);
    expect(list.body.data.map((e: { source: string }) => e.source)).toContain('provisional');
    const customer = await call(api.apiUrl, '/customers/user_1', t.secret_key);
    expect(customer.body.is_premium).toBe(true);
    expect(customer.body.entitlements[0]).toMatchObject({
      source: 'provisional',
      is_active: true,
      why: { rule: 'provisional', provisional: { status: 'provisional', event_type: expect.any(String) } },
    });
  });

  it('another tenant never sees it: the same app user id there is nobody', async () => {
    const theirs = await sdk('user_1', otherPk);
    expect(theirs.body).toMatchObject({ is_premium: false, entitlements: [] });
    const list = await call(api.apiUrl, '/entitlements?app_user_id=user_1', other.secret_key);
    expect(list.body.data).toEqual([]);
    expect((await call(api.apiUrl, '/customers/user_1', other.secret_key)).status).toBe(404);
    // Under the other tenant's row-level security the rows are not there at all.
    expect(await grants(other.tenant_id, 'user_1')).toEqual([]);
  });

  it('a refund received while paused withdraws the provisional access it outdates', async () => {
    await checkout('user_2');
    expect((await sdk('user_2')).body.is_premium).toBe(true);
    const refund = await control('/events', { type: 'charge.refunded', target: target(), account });
    expect(refund.status).toBe(200);
    expect((await sdk('user_2')).body).toMatchObject({ is_premium: false, entitlements: [] });
    expect((await grants(t.tenant_id, 'user_2')).map((g) => g.state)).toEqual(expect.arrayContaining(['withdrawn']));
  });

  it('expiry: an unconfirmed grant stops counting, shows as unconfirmed and is counted by the metric', async () => {
    // A short window for this purchase only (the configurable one; 15 minutes by default).
    const window = api.services.config.provisionalAccessSeconds;
    api.services.config.provisionalAccessSeconds = 2;
    try {
      await checkout('user_3');
    } finally {
      api.services.config.provisionalAccessSeconds = window;
    }
    expect((await grants(t.tenant_id, 'user_3')).length).toBeGreaterThan(0);
    await until(
      'the provisional grant ran out',
      () => sdk('user_3'),
      (r) => r.body.is_premium === false,
    );
    const customer = await call(api.apiUrl, '/customers/user_3', t.secret_key);
    expect(customer.body.is_premium).toBe(false);
    expect(customer.body.entitlements.length).toBeGreaterThan(0);
    for (const e of customer.body.entitlements)
      expect(e).toMatchObject({
        source: 'provisional',
        is_active: false,
        why: { rule: 'provisional_unconfirmed', provisional: { status: 'unconfirmed' } },
      });
    // A scrape marks and counts them, once each.
    registerProvisionalExpiry(appDb());
    const metric = registry.getSingleMetric('billing_provisional_unconfirmed_total')!;
    const value = async () => (await metric.get()).values.find((v) => v.labels.provider === 'psp_a')?.value ?? 0;
    const counted = await value();
    const rows = await grants(t.tenant_id, 'user_3');
    expect(rows.every((g) => g.state === 'unconfirmed')).toBe(true);
    expect(counted).toBeGreaterThanOrEqual(rows.length);
    expect(await value()).toBe(counted); // not counted twice
    expect(JSON.stringify((await metric.get()).values.map((v) => v.labels))).not.toContain(t.tenant_id);
  });

  it('after resume the workflow confirms: its write supersedes the provisional rows; a refund then revokes', async () => {
    resume();
    const confirmed = await until(
      'confirmed by the workflow',
      () => sdk('user_1'),
      (r) => confirmedPremium(r.body),
      60_000,
    );
    expect(confirmed.body.entitlements).toEqual([
      expect.objectContaining({ source: 'paid', provider: 'psp_a', state: 'active', sku: 'pro_monthly' }),
    ]);
    expect(await grants(t.tenant_id, 'user_1')).toEqual([]);

    // The refund of user_1's charge (later checkouts' charges are the emulator's default object).
    const refund = await control('/events', {
      type: 'charge.refunded',
      target: target(),
      account,
      data: { object: { id: 'ch_user_1_refund', customer: user1Customer, refunded: true } },
    });
    expect(refund.status).toBe(200);
    const revoked = await until(
      'revoked',
      () => sdk('user_1'),
      (r) => r.body.is_premium === false,
      60_000,
    );
    expect(revoked.body.entitlements).toEqual([expect.objectContaining({ source: 'paid', state: 'revoked' })]);
  });

  it('a late, stale "payment succeeded" after the refund grants nothing', async () => {
    const sub = await testDb()('subscriptions')
      .where({ tenant_id: t.tenant_id, app_user_id: 'user_1' })
      .first('external_id', 'customer_external_id', 'status');
    expect(sub.status).toBe('refunded');
    const refundedAt = Date.parse(
      (await testDb()('entitlements').where({ tenant_id: t.tenant_id, app_user_id: 'user_1' }).first('expires_at'))
        .expires_at,
    );
    // The provider's own time of the success is before the refund's: it was delayed, not new.
    const stale = (id: string) => {
      const payload = JSON.stringify({
        id,
        object: 'event',
        type: 'invoice.payment_succeeded',
        account,
        livemode: false,
        created: Math.floor(refundedAt / 1000) - 60,
        data: {
          object: {
            id: `in_${id}`,
            object: 'invoice',
            customer: sub.customer_external_id,
            subscription: sub.external_id,
            metadata: { app_user_id: 'user_1', sku: 'pro_monthly' },
          },
        },
      });
      return fetch(target(), {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret: webhookSecret }),
        },
        body: payload,
      });
    };
    expect((await stale('evt_stale_after_refund_1')).status).toBe(200);
    expect((await sdk('user_1')).body.is_premium).toBe(false);
    expect(await grants(t.tenant_id, 'user_1')).toEqual([]);
    // Without the refund's receipt record (a refund that came by import or repair), the held state alone refuses it.
    await testDb()('provisional_access').where({ tenant_id: t.tenant_id, kind: 'stop' }).del();
    expect((await stale('evt_stale_after_refund_2')).status).toBe(200);
    expect((await sdk('user_1')).body.is_premium).toBe(false);
    expect(await grants(t.tenant_id, 'user_1')).toEqual([]);
  });
});
