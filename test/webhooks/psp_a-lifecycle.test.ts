import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sellOnWebProvider } from '../helpers/connections';
import { startAllEmulators } from '../../emulators/registry';
import type { RunningEmulator } from '../../emulators/common/host';
import { PROVIDERS, type ProviderId } from '../../domain/providers';
import { createAdapters } from '../../providers';
import { testDb } from '../helpers/db';
import { call, newTenant, startApi } from '../helpers/api';
import { startTestWorker } from '../helpers/temporal';
import { until } from '../helpers/until';
import { confirmedPremium } from '../helpers/premium';

/**
 * psp_a's signed webhooks, end to end: the emulator's hosted checkout sends its three events
 * to the dashboard host, the customer's entity workflow derives the subscription and the
 * entitlement, and the SDK endpoint answers premium; a refund revokes it.
 */
describe('psp_a webhooks → subscription and entitlement', () => {
  let emulators: Record<ProviderId, RunningEmulator>;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let api: Awaited<ReturnType<typeof startApi>>;
  let t: Awaited<ReturnType<typeof newTenant>>;
  let account: string;
  let pkTest: string;
  let pkLive: string;
  const control = async (path: string, body: unknown) =>
    (
      await fetch(`${emulators.psp_a.url}/__control${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    ).json();
  const target = () => `${api.dashboardRoot}/api/webhooks/psp_a`;
  const sdk = (user: string, pk = pkTest) => call(api.apiRoot, `/v1/sdk/subscribers/${user}`, pk);

  beforeAll(async () => {
    emulators = await startAllEmulators(
      { emulatorPorts: {} as never, dataDir: '' },
      { persistent: false, anyPort: true },
    );
    const providerBaseUrls = Object.fromEntries(PROVIDERS.map((p) => [p, emulators[p].url])) as Record<
      ProviderId,
      string
    >;
    worker = await startTestWorker({ config: { providerBaseUrls } });
    api = await startApi({ config: worker.config, vault: worker.vault, adapters: createAdapters(worker.config) });
    t = await newTenant('hooks');
    // The checkout sells what a sync put at the provider.
    ({ account } = await sellOnWebProvider({
      emulatorUrl: emulators.psp_a.url,
      vault: worker.vault,
      apiUrl: api.apiUrl,
      tenant: t,
    }));
    const app = await testDb()('apps')
      .where({ tenant_id: t.tenant_id })
      .first('publishable_key_test', 'publishable_key_live');
    pkTest = app.publishable_key_test;
    pkLive = app.publishable_key_live;
  });
  afterAll(async () => {
    await api?.close();
    await worker?.stop();
    await Promise.all(Object.values(emulators ?? {}).map((e) => e.close()));
  });

  it('checkout → premium within seconds; the subscription is active, test mode, with its email; payloads are stored redacted', async () => {
    expect((await sdk('user_1')).body).toMatchObject({
      is_premium: false,
      entitlements: [],
      cache_ttl_seconds: 604800,
    });
    const checkout = await control('/checkout', {
      sku: 'pro_monthly',
      email: 'buyer@example.com',
      target: target(),
      account,
      mode: 'test',
      app_user_id: 'user_1',
    });
    expect(checkout.events.map((e: any) => e.status)).toEqual([200, 200, 200]);
    const premium = await until(
      'premium',
      () => sdk('user_1'),
      (r) => confirmedPremium(r.body),
    );
    expect(premium.body.entitlements).toEqual([
      expect.objectContaining({ provider: 'psp_a', state: 'active', is_sandbox: true, sku: 'pro_monthly' }),
    ]);
    // A live key never sees a test record.
    expect((await sdk('user_1', pkLive)).body).toMatchObject({ is_premium: false, entitlements: [] });

    const subs = await call(api.apiUrl, '/subscribers?provider=psp_a', t.secret_key);
    expect(subs.body.data).toEqual([
      expect.objectContaining({ status: 'active', mode: 'test', email: 'buyer@example.com', app_user_id: 'user_1' }),
    ]);
    const hooks = await until(
      'processed',
      () => call(api.apiUrl, '/webhooks?provider=psp_a', t.secret_key),
      (r) => r.body.data.filter((d: any) => d.status === 'processed').length === 3,
    );
    expect(hooks.body.data.map((d: any) => d.event_type).sort()).toEqual([
      'customer.subscription.created',
      'invoice.payment_succeeded',
      'payment_intent.succeeded',
    ]);
    expect(JSON.stringify(hooks.body)).not.toContain('buyer@example.com');
  });

  it('the same event delivered ten times is one row with a counter, and one effect', async () => {
    const first = await control('/events', { type: 'invoice.payment_succeeded', target: target(), account });
    expect(first.status).toBe(200);
    for (let i = 0; i < 9; i++)
      expect(
        (await control('/events', { id: first.id, type: 'invoice.payment_succeeded', target: target(), account }))
          .status,
      ).toBe(200);
    const rows = await testDb()('webhook_deliveries').where({ provider: 'psp_a', event_id: first.id });
    expect(rows).toHaveLength(1);
    expect(rows[0].delivery_count).toBe(10);
    expect(
      Number((await testDb()('subscriptions').where({ tenant_id: t.tenant_id }).count({ n: '*' }).first())!.n),
    ).toBe(1);
  });

  it('a refund revokes the entitlement at once; the subscription is refunded', async () => {
    const refund = await control('/events', { type: 'charge.refunded', target: target(), account });
    expect(refund.status).toBe(200);
    const r = await until(
      'revoked',
      () => sdk('user_1'),
      (x) => x.body.is_premium === false,
    );
    expect(r.body.entitlements[0].state).toBe('revoked');
    const subs = await call(api.apiUrl, '/subscribers?provider=psp_a', t.secret_key);
    expect(subs.body.data[0].status).toBe('refunded');
  });

  it('a bad signature and an unknown account are refused with 400 and listed as failed; nothing else changes', async () => {
    const before = await testDb()('subscriptions').where({ tenant_id: t.tenant_id }).select('status', 'updated_at');
    const bad = await control('/events', {
      type: 'customer.subscription.deleted',
      target: target(),
      account,
      signature: 'bad',
    });
    expect(bad.status).toBe(400);
    const unknown = await fetch(target(), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=00' },
      body: JSON.stringify({ id: 'evt_x', type: 'charge.refunded', account: 'acct_nobody', data: { object: {} } }),
    });
    expect(unknown.status).toBe(400);
    expect((await unknown.json()).error).toBe('webhook_refused');
    const failed = await call(api.apiUrl, '/webhooks?provider=psp_a&status=failed', t.secret_key);
    expect(failed.body.data.some((d: any) => /signature/.test(d.reason))).toBe(true);
    expect(await testDb()('subscriptions').where({ tenant_id: t.tenant_id }).select('status', 'updated_at')).toEqual(
      before,
    );
  });

  it('client endpoints take publishable keys only: a secret key is refused with a clear error', async () => {
    const r = await call(api.apiRoot, '/v1/sdk/subscribers/user_1', t.secret_key);
    expect(r.status).toBe(401);
    expect(r.body.error).toBe('invalid_api_key');
    expect(r.body.detail).toMatch(/Secret keys are refused/);
    const other = await newTenant('hooks-other');
    const cross = await call(api.apiRoot, '/v1/sdk/subscribers/user_1', other.publishable_key);
    expect(cross.body).toMatchObject({ is_premium: false, entitlements: [] });
  });
});
