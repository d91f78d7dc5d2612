import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sellOnWebProvider } from '../helpers/connections';
import { newTenant } from '../helpers/api';
import { until } from '../helpers/until';
import { createEndpoint, startOutboundStack } from './fixtures';

/**
 * The whole path: psp_a's hosted checkout and a refund, as signed provider webhooks, through
 * the customer's lifecycle workflow, to the tenant's endpoint: `entitlement.active` then
 * `entitlement.revoked` (reason `refunded`, provider psp_a), in that order, verified by the
 * standardwebhooks library.
 */
describe('outbound webhooks: a real purchase and refund reach the tenant’s backend', () => {
  let s: Awaited<ReturnType<typeof startOutboundStack>>;
  let t: Awaited<ReturnType<typeof newTenant>>;
  let account: string;
  const control = async (path: string, body: unknown) =>
    (
      await fetch(`${s.emulators.psp_a.url}/__control${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    ).json();

  beforeAll(async () => {
    s = await startOutboundStack();
    t = await newTenant('outbound-e2e');
    ({ account } = await sellOnWebProvider({
      emulatorUrl: s.emulators.psp_a.url,
      vault: s.worker.vault,
      apiUrl: s.api.apiUrl,
      tenant: t,
    }));
  });
  afterAll(async () => s?.close());

  it('checkout → entitlement.active, refund → entitlement.revoked with reason refunded, in order, signed', async () => {
    const ep = await createEndpoint(s.api.apiUrl, t.secret_key, {
      url: s.rx.url,
      event_types: ['entitlement.active', 'entitlement.revoked', 'sync_run.finished'],
    });
    const target = `${s.api.dashboardRoot}/api/webhooks/psp_a`;
    const checkout = await control('/checkout', {
      sku: 'pro_monthly',
      email: 'buyer@example.com',
      target,
      account,
      mode: 'test',
      app_user_id: 'user_e2e',
    });
    expect(checkout.events.map((e: any) => e.status)).toEqual([200, 200, 200]);
    await until(
      'active delivered',
      async () => s.rx.received.length,
      (n) => n >= 1,
      30_000,
    );
    expect((await control('/events', { type: 'charge.refunded', target, account })).status).toBe(200);
    await until(
      'revoked delivered',
      async () => s.rx.received.length,
      (n) => n >= 2,
      30_000,
    );
    const bodies = s.rx.received.map((r) => s.rx.verify(r, ep.secret));
    expect(bodies.map((b: any) => b.type)).toEqual(['entitlement.active', 'entitlement.revoked']);
    expect(bodies[0].data).toMatchObject({
      app_user_id: 'user_e2e',
      provider: 'psp_a',
      sku: 'pro_monthly',
      state: 'active',
      is_sandbox: true,
    });
    expect(bodies[1].data).toMatchObject({
      app_user_id: 'user_e2e',
      provider: 'psp_a',
      state: 'revoked',
      previous_state: 'active',
      reason: 'refunded',
    });
    // The buyer's email is not the app user here, and nothing else carries it.
    expect(s.rx.received.map((r) => r.body).join('')).not.toContain('buyer@example.com');
  });
});
