import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, Connection } from '@temporalio/client';
import { sellOnWebProvider } from '../helpers/connections';
import { startAllEmulators } from '../../emulators/registry';
import type { RunningEmulator } from '../../emulators/common/host';
import { PROVIDERS, type ProviderId } from '../../domain/providers';
import { createAdapters } from '../../providers';
import { generateMasterKey } from '../../vault/vault';
import { testDb } from '../helpers/db';
import { call, newTenant, startApi } from '../helpers/api';
import { startTestWorker } from '../helpers/temporal';
import { until } from '../helpers/until';
import { startDispatcher, stopDispatcher } from '../../api/webhooks/dispatcher';
import { confirmedPremium } from '../helpers/premium';

/** Faults of the processing path, acting only on this file's own worker and API processes. */
describe('webhook processing under faults', () => {
  let emulators: Record<ProviderId, RunningEmulator>;
  let worker: Awaited<ReturnType<typeof startTestWorker>> | undefined;
  let api: Awaited<ReturnType<typeof startApi>>;
  let t: Awaited<ReturnType<typeof newTenant>>;
  let account: string;
  let taskQueue: string;
  let providerBaseUrls: Record<ProviderId, string>;
  const masterKey = generateMasterKey();
  const control = async (path: string, body: unknown) =>
    (
      await fetch(`${emulators.psp_a.url}/__control${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    ).json();
  const delivery = (id: string) => testDb()('webhook_deliveries').where({ provider: 'psp_a', event_id: id }).first();

  beforeAll(async () => {
    emulators = await startAllEmulators(
      { emulatorPorts: {} as never, dataDir: '' },
      { persistent: false, anyPort: true },
    );
    providerBaseUrls = Object.fromEntries(PROVIDERS.map((p) => [p, emulators[p].url])) as Record<ProviderId, string>;
    worker = await startTestWorker({ config: { providerBaseUrls }, masterKey });
    taskQueue = worker.taskQueue;
    api = await startApi({ config: worker.config, vault: worker.vault, adapters: createAdapters(worker.config) });
    t = await newTenant('faults');
    ({ account } = await sellOnWebProvider({
      emulatorUrl: emulators.psp_a.url,
      vault: worker.vault,
      apiUrl: api.apiUrl,
      tenant: t,
      sku: 'pro',
    }));
  });
  afterAll(async () => {
    await api?.close();
    await worker?.stop();
    await Promise.all(Object.values(emulators ?? {}).map((e) => e.close()));
  });

  it('with the worker down, events are acknowledged and every one is processed once it returns', async () => {
    await worker!.stop();
    worker = undefined;
    const target = `${api.dashboardRoot}/api/webhooks/psp_a`;
    const checkouts = [];
    for (const user of ['w1', 'w2', 'w3']) {
      const c = await control('/checkout', {
        sku: 'pro',
        email: `${user}@example.com`,
        target,
        account,
        mode: 'test',
        app_user_id: user,
      });
      expect(c.events.map((e: any) => e.status)).toEqual([200, 200, 200]);
      checkouts.push(c);
    }
    const ids = checkouts.flatMap((c) => c.events.map((e: any) => e.id));
    expect((await Promise.all(ids.map(delivery))).every((d) => d.status === 'received')).toBe(true);

    worker = await startTestWorker({ config: { providerBaseUrls, taskQueue }, masterKey });
    expect(worker.taskQueue).toBe(taskQueue);
    await until(
      'all processed',
      () => Promise.all(ids.map(delivery)),
      (rows) => rows.every((d) => d.status === 'processed'),
    );
    for (const user of ['w1', 'w2', 'w3']) {
      const r = await call(api.apiRoot, `/v1/sdk/subscribers/${user}`, t.publishable_key);
      expect(r.body.is_premium, user).toBe(true);
    }
  });

  it('with Temporal unreachable the event is accepted into the outbox (200) and handed over once Temporal can be reached', async () => {
    // Only the broken process dispatches while Temporal is "down": the healthy one's dispatcher is stopped.
    await stopDispatcher(api.services);
    const dead = Connection.lazy({ address: '127.0.0.1:1', connectTimeout: 500 });
    const broken = await startApi({
      config: worker!.config,
      vault: worker!.vault,
      adapters: createAdapters(worker!.config),
      temporal: { connection: dead, client: new Client({ connection: dead }) },
    });
    let first: any;
    try {
      first = await control('/checkout', {
        sku: 'pro',
        email: 'late@example.com',
        target: `${broken.dashboardRoot}/api/webhooks/psp_a`,
        account,
        mode: 'test',
        app_user_id: 'late',
      });
      // Stored with the guarantee that processing will start: the delivery and its outbox row, committed together.
      expect(first.events.map((e: any) => e.status)).toEqual([200, 200, 200]);
      for (const e of first.events) expect((await delivery(e.id)).status).toBe('received');
      const queued = await testDb()('webhook_outbox as o')
        .join('webhook_deliveries as d', 'd.id', 'o.delivery_id')
        .whereIn(
          'd.event_id',
          first.events.map((e: any) => e.id),
        )
        .count('* as n')
        .first();
      expect(Number(queued!.n)).toBe(3);
      // Nothing applied yet, but the buyer is premium already: provisional access at receipt (docs/provisional-access.md).
      const meanwhile = await call(api.apiRoot, '/v1/sdk/subscribers/late', t.publishable_key);
      expect(meanwhile.body.is_premium).toBe(true);
      expect(meanwhile.body.entitlements.every((e: any) => e.source === 'provisional')).toBe(true);
    } finally {
      await broken.close();
    }
    // Temporal reachable again (a dispatcher that reaches it): the outbox drains, no provider retry needed.
    startDispatcher(api.services).kick();
    await until(
      'premium once handed over',
      () => call(api.apiRoot, '/v1/sdk/subscribers/late', t.publishable_key),
      (r) => confirmedPremium(r.body),
    );
    await until(
      'all processed',
      () => Promise.all(first.events.map((e: any) => delivery(e.id))),
      (rows: any[]) => rows.every((d) => d.status === 'processed'),
    );
    for (const e of first.events) expect((await delivery(e.id)).delivery_count).toBe(1);
  });
});
