import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sellOnPspA } from '../helpers/connections';
import { startAllEmulators } from '../../emulators/registry';
import type { RunningEmulator } from '../../emulators/common/host';
import { PROVIDERS, type ProviderId } from '../../domain/providers';
import { createAdapters } from '../../providers';
import { newTenant, startApi } from '../helpers/api';
import { startTestWorker } from '../helpers/temporal';
import { until } from '../helpers/until';
import { createEndpoint, outboundConfig } from './fixtures';
import { startReceiver, type TestReceiver } from './receiver';

/**
 * The whole path: psp_a's hosted checkout and a refund, as signed provider webhooks, through
 * the customer's lifecycle workflow, to the tenant's endpoint: `entitlement.active` then
 * `entitlement.revoked` (reason `refunded`, provider psp_a), in that order, verified by the
 * standardwebhooks library.
 */
describe('outbound webhooks: a real purchase and refund reach the tenant’s backend', () => {
  let emulators: Record<ProviderId, RunningEmulator>;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let api: Awaited<ReturnType<typeof startApi>>;
  let t: Awaited<ReturnType<typeof newTenant>>;
  let rx: TestReceiver;
  let account: string;
  const control = async (path: string, body: unknown) =>
    (await fetch(`${emulators.psp_a.url}/__control${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json();

  beforeAll(async () => {
    emulators = await startAllEmulators({ emulatorPorts: {} as never, dataDir: '' }, { persistent: false, anyPort: true });
    const providerBaseUrls = Object.fromEntries(PROVIDERS.map((p) => [p, emulators[p].url])) as Record<ProviderId, string>;
    worker = await startTestWorker({ config: { providerBaseUrls, ...outboundConfig() } });
    api = await startApi({ config: worker.config, vault: worker.vault, adapters: createAdapters(worker.config) });
    t = await newTenant('outbound-e2e');
    rx = await startReceiver();
    ({ account } = await sellOnPspA({ emulatorUrl: emulators.psp_a.url, vault: worker.vault, apiUrl: api.apiUrl, tenant: t }));
  });
  afterAll(async () => {
    await api?.close();
    await worker?.stop();
    await rx?.close();
    await Promise.all(Object.values(emulators ?? {}).map((e) => e.close()));
  });

  it('checkout → entitlement.active, refund → entitlement.revoked with reason refunded, in order, signed', async () => {
    const ep = await createEndpoint(api.apiUrl, t.secret_key, { url: rx.url, event_types: ['entitlement.active', 'entitlement.revoked', 'sync_run.finished'] });
    const target = `${api.dashboardRoot}/api/webhooks/psp_a`;
    const checkout = await control('/checkout', { sku: 'pro_monthly', email: 'buyer@example.com', target, account, mode: 'test', app_user_id: 'user_e2e' });
    expect(checkout.events.map((e: any) => e.status)).toEqual([200, 200, 200]);
    await until('active delivered', async () => rx.received.length, (n) => n >= 1, 30_000);
    expect((await control('/events', { type: 'charge.refunded', target, account })).status).toBe(200);
    await until('revoked delivered', async () => rx.received.length, (n) => n >= 2, 30_000);
    const bodies = rx.received.map((r) => rx.verify(r, ep.secret));
    expect(bodies.map((b: any) => b.type)).toEqual(['entitlement.active', 'entitlement.revoked']);
    expect(bodies[0].data).toMatchObject({ app_user_id: 'user_e2e', provider: 'psp_a', sku: 'pro_monthly', state: 'active', is_sandbox: true });
    expect(bodies[1].data).toMatchObject({ app_user_id: 'user_e2e', provider: 'psp_a', state: 'revoked', previous_state: 'active', reason: 'refunded' });
    // The buyer's email is not the app user here, and nothing else carries it.
    expect(rx.received.map((r) => r.body).join('')).not.toContain('buyer@example.com');
  });
});
