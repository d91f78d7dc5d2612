import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sellOnWebProvider } from '../helpers/connections';
import { startAllEmulators } from '../../emulators/registry';
import type { RunningEmulator } from '../../emulators/common/host';
import { PROVIDERS, WEB_PROVIDERS, type ProviderId, type WebProviderId } from '../../domain/providers';
import { GRACE_PERIOD_DAYS } from '../../domain/entitlement';
import { createAdapters } from '../../providers';
import { testDb } from '../helpers/db';
import { call, newTenant, startApi } from '../helpers/api';
import { startTestWorker } from '../helpers/temporal';
import { until } from '../helpers/until';
import { confirmedPremium } from '../helpers/premium';

type Ids = { sub: string; cus: string; periodEnd: string };
type Step = [type: string, data: (ids: Ids) => Record<string, unknown>];

/**
 * Each web provider's own events for the same lifecycle (docs/lifecycles.md), in the shape the
 * provider sends them: a failed renewal, its recovery, a cancellation at once, one scheduled for
 * the period end, and a refund.
 */
const EVENTS: Record<
  WebProviderId,
  { fail: Step; recover: Step; cancelNow: Step; schedule: Step | null; refund: Step }
> = {
  psp_a: {
    fail: ['invoice.payment_failed', () => ({})],
    recover: ['invoice.payment_succeeded', () => ({})],
    cancelNow: ['customer.subscription.deleted', ({ sub }) => ({ id: sub })],
    schedule: ['customer.subscription.updated', ({ sub }) => ({ id: sub, cancel_at_period_end: true })],
    refund: ['charge.refunded', () => ({})],
  },
  psp_b: {
    fail: ['transaction.payment_failed', () => ({})],
    recover: ['transaction.completed', () => ({})],
    cancelNow: ['subscription.canceled', ({ sub }) => ({ id: sub })],
    schedule: [
      'subscription.updated',
      ({ sub, periodEnd }) => ({
        id: sub,
        scheduled_change: { action: 'cancel', effective_at: periodEnd, resume_at: null },
      }),
    ],
    refund: ['adjustment.created', () => ({})],
  },
  psp_c: {
    fail: ['subscription.pending', ({ sub }) => ({ subscription_id: sub })],
    recover: ['subscription.charged', ({ sub }) => ({ subscription_id: sub })],
    cancelNow: ['subscription.cancelled', ({ sub }) => ({ subscription_id: sub })],
    // Razorpay's webhook names no scheduled cancellation: cancel_at_cycle_end only delays subscription.cancelled.
    schedule: null,
    refund: [
      'payment.refunded',
      ({ sub, cus }) => ({ customer_id: cus, payment: { entity: { notes: { subscription_id: sub } } } }),
    ],
  },
};

describe.each(WEB_PROVIDERS.map((p) => [p]))('%s lifecycle → GET /v1/sdk/subscribers/{id}', (provider) => {
  let emulators: Record<ProviderId, RunningEmulator>;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let api: Awaited<ReturnType<typeof startApi>>;
  let t: Awaited<ReturnType<typeof newTenant>>;
  let account: string;
  let n = 0;
  const target = () => `${api.dashboardRoot}/api/webhooks/${provider}`;
  const control = async (path: string, body: unknown) =>
    (
      await fetch(`${emulators[provider].url}/__control${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    ).json();
  const sdk = async (user: string) => (await call(api.apiRoot, `/v1/sdk/subscribers/${user}`, t.publishable_key)).body;
  const subRow = (external_id: string) =>
    testDb()('subscriptions').where({ tenant_id: t.tenant_id, provider, external_id }).first();
  /** Providers stamp events to the second: the next event must be later than the last for its order to show. */
  const nextSecond = async () => {
    const now = Math.floor(Date.now() / 1000);
    await until(
      'the next second',
      async () => Math.floor(Date.now() / 1000),
      (s) => s > now,
    );
  };
  const send = async ([type, data]: Step, ids: Ids) => {
    await nextSecond();
    const r = await control('/events', { type, target: target(), account, data: data(ids) });
    expect([type, r.status]).toEqual([type, 200]);
    await until(
      `${type} processed`,
      () => testDb()('webhook_deliveries').where({ provider, event_id: r.id }).first(),
      (d) => d?.status === 'processed',
    );
  };
  const checkout = async (): Promise<{ user: string; ids: Ids }> => {
    const user = `${provider}_u${++n}`;
    const c = await control('/checkout', {
      sku: 'pro_monthly',
      email: `${user}@example.com`,
      target: target(),
      account,
      mode: 'test',
      app_user_id: user,
    });
    expect(c.events.every((e: { status: number }) => e.status === 200)).toBe(true);
    await until(
      'premium',
      () => sdk(user),
      (b) => confirmedPremium(b),
    );
    const row = await until(
      'the subscription row',
      () => subRow(c.subscription_id),
      (r) => !!r,
    );
    return {
      user,
      ids: {
        sub: c.subscription_id,
        cus: c.customer_id,
        periodEnd: new Date(row.current_period_end ?? Date.now() + 30 * 86_400_000).toISOString(),
      },
    };
  };

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
    t = await newTenant(`${provider}-lifecycle`);
    ({ account } = await sellOnWebProvider({
      provider,
      emulatorUrl: emulators[provider].url,
      vault: worker.vault,
      apiUrl: api.apiUrl,
      tenant: t,
    }));
  });
  afterAll(async () => {
    await api?.close();
    await worker?.stop();
    await Promise.all(Object.values(emulators ?? {}).map((e) => e.close()));
  });

  it('a failed renewal → past_due with a grace period (still premium, grace ends in 7 days); the next success recovers', async () => {
    const { user, ids } = await checkout();
    await send(EVENTS[provider].fail, ids);
    const grace = await sdk(user);
    expect(grace).toMatchObject({
      is_premium: true,
      entitlements: [expect.objectContaining({ state: 'grace_period' })],
    });
    const days = (Date.parse(grace.entitlements[0].grace_until) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(GRACE_PERIOD_DAYS - 0.01);
    expect(days).toBeLessThanOrEqual(GRACE_PERIOD_DAYS);
    expect((await subRow(ids.sub)).status).toBe('past_due');
    await send(EVENTS[provider].recover, ids);
    expect(await sdk(user)).toMatchObject({
      is_premium: true,
      entitlements: [expect.objectContaining({ state: 'active', grace_until: null })],
    });
    expect((await subRow(ids.sub)).status).toBe('active');
  });

  it('an immediate cancellation ends access at once, though the paid period runs on', async () => {
    const { user, ids } = await checkout();
    await send(EVENTS[provider].cancelNow, ids);
    expect(await sdk(user)).toMatchObject({
      is_premium: false,
      entitlements: [expect.objectContaining({ state: 'expired' })],
    });
    const row = await subRow(ids.sub);
    expect(row.status).toBe('canceled');
    expect(new Date(row.current_period_end).getTime()).toBeGreaterThan(Date.now() + 86_400_000);
  });

  it.runIf(EVENTS[provider].schedule)(
    'a cancellation scheduled for the period end keeps access to that date; the provider’s final event ends it',
    async () => {
      const { user, ids } = await checkout();
      await send(EVENTS[provider].schedule!, ids);
      const kept = await sdk(user);
      expect(kept).toMatchObject({ is_premium: true, entitlements: [expect.objectContaining({ state: 'active' })] });
      expect(Math.abs(Date.parse(kept.entitlements[0].expires_at) - Date.parse(ids.periodEnd))).toBeLessThan(2000);
      await send(EVENTS[provider].cancelNow, ids);
      expect(await sdk(user)).toMatchObject({
        is_premium: false,
        entitlements: [expect.objectContaining({ state: 'expired' })],
      });
    },
  );

  it('a refund revokes at once', async () => {
    const { user, ids } = await checkout();
    await send(EVENTS[provider].refund, ids);
    expect(await sdk(user)).toMatchObject({
      is_premium: false,
      entitlements: [expect.objectContaining({ state: 'revoked' })],
    });
    expect((await subRow(ids.sub)).status).toBe('refunded');
  });
});
