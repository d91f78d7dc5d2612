import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProvenConnection } from '../helpers/connections';
import { withTenant } from '../../db/tenant-tx';
import { startAllEmulators } from '../../emulators/registry';
import type { RunningEmulator } from '../../emulators/common/host';
import { PROVIDERS, type ProviderId } from '../../domain/providers';
import { createAdapters } from '../../providers';
import { createEmulatorAccount } from '../../seed/demo-providers';
import { testDb } from '../helpers/db';
import { call, newTenant, startApi } from '../helpers/api';
import { startTestWorker } from '../helpers/temporal';
import { until } from '../helpers/until';
import { confirmedPremium } from '../helpers/premium';

/** The other two web providers' hosted checkouts, signed their own way, reach premium too. */
describe.each(['psp_b', 'psp_c'] as const)('%s webhooks → premium', (provider) => {
  let emulators: Record<ProviderId, RunningEmulator>;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let api: Awaited<ReturnType<typeof startApi>>;

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
  });
  afterAll(async () => {
    await api?.close();
    await worker?.stop();
    await Promise.all(Object.values(emulators ?? {}).map((e) => e.close()));
  });

  it('checkout → signed events accepted → premium; a tampered delivery is refused', async () => {
    const t = await newTenant(provider);
    const acct = await createEmulatorAccount(emulators[provider].url);
    const productId = await withTenant(testDb(), t.tenant_id, async (trx) => {
      await createProvenConnection(trx, worker.vault, {
        provider,
        account_ref: acct.account,
        credentials: acct.credentials,
        webhook_secret: acct.webhook_secret,
      });
      const [p] = await trx('products')
        .insert({ tenant_id: t.tenant_id, sku: 'pro_monthly', name: 'Pro', tier: 'monthly' })
        .returning('id');
      await trx('prices').insert({
        tenant_id: t.tenant_id,
        product_id: p.id,
        country: 'US',
        currency: 'USD',
        amount_minor: 999,
      });
      return p.id as string;
    });
    expect(
      (await call(api.apiUrl, `/products/${productId}/sync?provider=${provider}`, t.secret_key, { method: 'POST' }))
        .body.ok,
    ).toBe(true);
    const target = `${api.dashboardRoot}/api/webhooks/${provider}`;
    const res = await fetch(`${emulators[provider].url}/__control/checkout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        sku: 'pro_monthly',
        email: 'b@example.com',
        target,
        account: acct.account,
        mode: 'test',
        app_user_id: `u_${provider}`,
      }),
    });
    const checkout = await res.json();
    expect(checkout.events.length).toBeGreaterThan(0);
    expect(checkout.events.every((e: any) => e.status === 200)).toBe(true);
    await until(
      'premium',
      () => call(api.apiRoot, `/v1/sdk/subscribers/u_${provider}`, t.publishable_key),
      (r) => confirmedPremium(r.body),
    );

    // A redelivery by the id the emulator answered lands on the row stored under that id.
    const first = checkout.events[0];
    const again = await fetch(`${emulators[provider].url}/__control/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: first.type, target, account: acct.account, id: first.id }),
    });
    expect(await again.json()).toMatchObject({ id: first.id, status: 200 });
    const rows = () =>
      testDb()('webhook_deliveries').where({ provider, tenant_id: t.tenant_id }).select('event_id', 'delivery_count');
    expect((await rows()).filter((r) => r.event_id === first.id)).toEqual([{ event_id: first.id, delivery_count: 2 }]);
    if (provider === 'psp_c') {
      // The same signed bytes under fresh X-Razorpay-Event-Id values are still that one event.
      const state = await (await fetch(`${emulators.psp_c.url}/__control/state`)).json();
      const sent = state.webhook_events.find((e: { id: string }) => e.id === first.id);
      const signature = crypto.createHmac('sha256', acct.webhook_secret).update(sent.body).digest('hex');
      for (const eventId of ['evt_replay_1', 'evt_replay_2', 'evt_replay_3']) {
        const res = await fetch(target, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-razorpay-signature': signature,
            'x-razorpay-event-id': eventId,
          },
          body: sent.body,
        });
        expect(await res.json()).toEqual({ received: true, id: first.id });
      }
      const after = await rows();
      expect(after.filter((r) => r.event_id === first.id)).toEqual([{ event_id: first.id, delivery_count: 5 }]);
      expect(after).toHaveLength(checkout.events.length);

      // A signed body nested 100,000 levels deep is refused by name before anything walks it, not a 500.
      const deep = `{"entity":"event","account_id":"${acct.account}","event":"payment.authorized","contains":[],"payload":{"deep":${'['.repeat(100_000)}1${']'.repeat(100_000)}},"created_at":1}`;
      const res = await fetch(target, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-razorpay-signature': crypto.createHmac('sha256', acct.webhook_secret).update(deep).digest('hex'),
        },
        body: deep,
      });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({
        error: 'webhook_refused',
        detail: expect.stringMatching(/nests deeper than 64 levels/),
      });
    }

    const bad = await fetch(`${emulators[provider].url}/__control/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: checkout.events[0].type, target, account: acct.account, signature: 'bad' }),
    });
    expect((await bad.json()).status).toBe(400);
  });
});
