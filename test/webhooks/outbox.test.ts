import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, Connection } from '@temporalio/client';
import { MAX_HANDOVER_ATTEMPTS } from '../../api/webhooks/dispatcher';
import type { Handover } from '../../api/webhooks/handover';
import { createProvenConnection } from '../helpers/connections';
import { withTenant } from '../../db/tenant-tx';
import { startAllEmulators } from '../../emulators/registry';
import type { RunningEmulator } from '../../emulators/common/host';
import { PROVIDERS, type ProviderId } from '../../domain/providers';
import { createAdapters } from '../../providers';
import { createEmulatorAccount } from '../../seed/demo-providers';
import { testDb } from '../helpers/db';
import { call, newTenant, refill, startApi } from '../helpers/api';
import { startTestWorker } from '../helpers/temporal';
import { until } from '../helpers/until';
import { startApiProcess } from '../helpers/api-process';
import { confirmedPremium } from '../helpers/premium';

/**
 * The webhook outbox as a queue people can trust: it drains at process start with no new
 * traffic, a row Temporal refuses is retried with back-off and then failed with its reason (in
 * GET /webhooks?status=failed), and such rows never hold back anyone else's events.
 */
describe('webhook outbox', () => {
  let emulators: Record<ProviderId, RunningEmulator>;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let t: Awaited<ReturnType<typeof newTenant>>;
  let account: string;
  let pk: string;
  const masterKey = `k1:${crypto.randomBytes(32).toString('base64')}`;
  const control = async (path: string, body: unknown) =>
    (
      await fetch(`${emulators.psp_a.url}/__control${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    ).json();

  beforeAll(async () => {
    emulators = await startAllEmulators(
      { emulatorPorts: {} as never, dataDir: '' },
      { persistent: false, anyPort: true },
    );
    const providerBaseUrls = Object.fromEntries(PROVIDERS.map((p) => [p, emulators[p].url])) as Record<
      ProviderId,
      string
    >;
    worker = await startTestWorker({ config: { providerBaseUrls }, masterKey });
    t = await newTenant('outbox');
    const acct = await createEmulatorAccount(emulators.psp_a.url);
    account = acct.account;
    await withTenant(testDb(), t.tenant_id, async (trx) => {
      await createProvenConnection(trx, worker.vault, {
        provider: 'psp_a',
        account_ref: acct.account,
        credentials: acct.credentials,
        webhook_secret: acct.webhook_secret,
      });
      await trx('products').insert({ tenant_id: t.tenant_id, sku: 'pro_monthly', name: 'Pro', tier: 'monthly' });
    });
    pk = (await testDb()('apps').where({ tenant_id: t.tenant_id }).first('publishable_key_test')).publishable_key_test;
  });
  afterAll(async () => {
    await worker?.stop();
    await Promise.all(Object.values(emulators ?? {}).map((e) => e.close()));
  });

  it('rows left queued when an api stopped drain when an api process starts, with no new traffic', async () => {
    // An api that stores events but cannot reach Temporal, then stops: its rows stay queued.
    const dead = Connection.lazy({ address: '127.0.0.1:1', connectTimeout: 500 });
    const cut = await startApi({
      config: worker.config,
      vault: worker.vault,
      adapters: createAdapters(worker.config),
      temporal: { connection: dead, client: new Client({ connection: dead }) },
    });
    const checkout = await control('/checkout', {
      sku: 'pro_monthly',
      email: 'boot@example.com',
      target: `${cut.dashboardRoot}/api/webhooks/psp_a`,
      account,
      mode: 'test',
      app_user_id: 'boot_user',
    });
    expect(checkout.events.map((e: any) => e.status)).toEqual([200, 200, 200]);
    await cut.close();
    const queued = () =>
      testDb()('webhook_outbox')
        .where({ task_queue: worker.taskQueue })
        .count({ n: '*' })
        .first()
        .then((r) => Number(r!.n));
    expect(await queued()).toBe(3);

    // The real api process (api/main.ts), as `npm run api` starts it. Nothing is sent to it.
    const api = await startApiProcess({
      NODE_ENV: 'test',
      TEMPORAL_TASK_QUEUE: worker.taskQueue,
      MASTER_KEY: masterKey,
    });
    try {
      await until('the outbox drained by the new process', queued, (n) => n === 0, 30_000).catch((e) => {
        throw new Error(`${e.message}\n${api.stderr()}`);
      });
      const premium = await until(
        'premium',
        () => call(`http://127.0.0.1:${api.apiPort}`, '/v1/sdk/subscribers/boot_user', pk),
        (r) => confirmedPremium(r.body),
      );
      expect(premium.body.entitlements).toEqual([expect.objectContaining({ state: 'active' })]);
      const ids = checkout.events.map((e: any) => e.id);
      const rows = await testDb()('webhook_deliveries').where({ tenant_id: t.tenant_id }).whereIn('event_id', ids);
      expect(rows.map((r: any) => [r.status, r.delivery_count])).toEqual(ids.map(() => ['processed', 1]));
    } finally {
      await api.stop();
    }
  });

  it('rows Temporal refuses are retried with back-off, then failed with their reason; they never hold back other events', async () => {
    const api = await startApi({ config: worker.config, vault: worker.vault, adapters: createAdapters(worker.config) });
    try {
      // Rows that reached the outbox before ids were bounded at receipt: a workflow id too long for Temporal.
      const POISON = 210; // more than one dispatcher batch
      const deliveries = await testDb()('webhook_deliveries')
        .insert(
          Array.from({ length: POISON }, (_, i) => ({
            tenant_id: t.tenant_id,
            provider: 'psp_a',
            event_id: `evt_poison_${i}_${crypto.randomBytes(4).toString('hex')}`,
            event_type: 'charge.refunded',
            status: 'received',
            payload: '{}',
          })),
        )
        .returning(['id', 'event_id']);
      const poison = (d: { event_id: string }): Handover => ({
        kind: 'lifecycle',
        tenantId: t.tenant_id,
        provider: 'psp_a',
        customerKey: `cus_${'p'.repeat(1200)}`,
        event: {
          id: d.event_id,
          kind: 'refunded',
          occurred_at: new Date().toISOString(),
          mode: 'test',
          subscription_id: null,
          customer_id: `cus_${'p'.repeat(1200)}`,
        },
      });
      await testDb()('webhook_outbox').insert(
        deliveries.map((d: any) => ({
          delivery_id: d.id,
          task_queue: worker.taskQueue,
          handover: JSON.stringify(poison(d)),
        })),
      );
      const poisonRows = () =>
        testDb()('webhook_outbox').whereIn(
          'delivery_id',
          deliveries.map((d: any) => d.id),
        );

      // A genuine purchase behind them still turns premium.
      const checkout = await control('/checkout', {
        sku: 'pro_monthly',
        email: 'next@example.com',
        target: `${api.dashboardRoot}/api/webhooks/psp_a`,
        account,
        mode: 'test',
        app_user_id: 'next_user',
      });
      expect(checkout.events.map((e: any) => e.status)).toEqual([200, 200, 200]);
      await until(
        'premium behind the poison rows',
        () => call(api.apiRoot, '/v1/sdk/subscribers/next_user', pk),
        (r) => confirmedPremium(r.body),
        30_000,
      );

      const tried = await until('each poison row tried once', poisonRows, (rows) =>
        rows.every((r: any) => r.attempts >= 1),
      );
      // Refused by Temporal (the row's fault), so the attempt counted and the reason is kept.
      expect(tried.every((r: any) => /workflow ?id|length|too long|invalid/i.test(r.last_error ?? ''))).toBe(true);

      // Skip the back-off waits (the clock, not the behaviour): each round spends one more attempt.
      await until(
        'poison rows failed',
        async () => {
          await testDb()('webhook_outbox')
            .whereIn(
              'delivery_id',
              deliveries.map((d: any) => d.id),
            )
            .update({ next_attempt_at: testDb().fn.now() });
          return testDb()('webhook_deliveries')
            .whereIn(
              'id',
              deliveries.map((d: any) => d.id),
            )
            .where({ status: 'failed' })
            .count({ n: '*' })
            .first()
            .then((r) => Number(r!.n));
        },
        (n) => n === POISON,
        60_000,
      );
      expect(await poisonRows()).toEqual([]);
      await refill(t.tenant_id);
      const failed = await call(
        api.apiUrl,
        '/webhooks?status=failed&event_type=charge.refunded&limit=200',
        t.secret_key,
      );
      expect(failed.body.pagination.total).toBeGreaterThanOrEqual(POISON);
      expect(failed.body.data[0].reason).toMatch(
        new RegExp(`could not be started after ${MAX_HANDOVER_ATTEMPTS} attempts`),
      );
    } finally {
      await api.close();
    }
  });
});
