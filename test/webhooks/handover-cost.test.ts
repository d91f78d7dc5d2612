import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Knex } from 'knex';
import { Client, Connection } from '@temporalio/client';
import { createKnex } from '../../db/knex';
import { withTenant } from '../../db/tenant-tx';
import { startAllEmulators } from '../../emulators/registry';
import type { RunningEmulator } from '../../emulators/common/host';
import { PROVIDERS, type ProviderId } from '../../domain/providers';
import { createAdapters } from '../../providers';
import { createEmulatorAccount } from '../../seed/demo-providers';
import { lifecycleWorkflowId } from '../../temporal/workflow-starts';
import { createProvenConnection } from '../helpers/connections';
import { testDb } from '../helpers/db';
import { call, newTenant, startApi } from '../helpers/api';
import { startTestWorker } from '../helpers/temporal';
import { confirmedPremium } from '../helpers/premium';
import { until } from '../helpers/until';

/**
 * What one checkout costs the engine and the database, read from the customer workflow's own
 * history and from the worker's connection: the structure bench/payment-to-premium.ts measures
 * the CPU of (bench/RESULTS.md, "CPU per purchase"). A checkout's three events, waiting in the
 * outbox together, reach their workflow as one signal, are applied in one workflow task, and
 * written in one local activity of one transaction. Counts, not times: a regression (a signal per
 * event, a workflow task per signal, a write split into more statements) fails here.
 */
describe('the cost of one checkout', () => {
  let emulators: Record<ProviderId, RunningEmulator>;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let workerDb: Knex;
  const workerQueries: string[] = [];
  let t: Awaited<ReturnType<typeof newTenant>>;
  let account: string;
  let pk: string;
  const masterKey = `k1:${crypto.randomBytes(32).toString('base64')}`;

  beforeAll(async () => {
    emulators = await startAllEmulators(
      { emulatorPorts: {} as never, dataDir: '' },
      { persistent: false, anyPort: true },
    );
    const providerBaseUrls = Object.fromEntries(PROVIDERS.map((p) => [p, emulators[p].url])) as Record<
      ProviderId,
      string
    >;
    // The worker on a connection of its own, so every statement its write sends is seen here.
    workerDb = createKnex(inject('appDatabaseUrl'), { max: 2 });
    workerDb.on('query', (q: { sql: string }) => workerQueries.push(q.sql));
    worker = await startTestWorker({ config: { providerBaseUrls }, masterKey, db: workerDb });
    t = await newTenant('handover-cost');
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
    await workerDb?.destroy();
    await Promise.all(Object.values(emulators ?? {}).map((e) => e.close()));
  });

  it('one signal, one workflow task, one write in one transaction', async () => {
    // Stored while Temporal is away (an api whose Temporal address answers nothing), so all three wait in the outbox.
    const dead = Connection.lazy({ address: '127.0.0.1:1', connectTimeout: 500 });
    const cut = await startApi({
      config: worker.config,
      vault: worker.vault,
      adapters: createAdapters(worker.config),
      temporal: { connection: dead, client: new Client({ connection: dead }) },
    });
    const checkout = await (
      await fetch(`${emulators.psp_a.url}/__control/checkout`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          sku: 'pro_monthly',
          email: 'cost@example.com',
          target: `${cut.dashboardRoot}/api/webhooks/psp_a`,
          account,
          mode: 'test',
          app_user_id: 'cost_user',
        }),
      })
    ).json();
    expect(checkout.events.map((e: { status: number }) => e.status)).toEqual([200, 200, 200]);
    await cut.close();

    // Temporal back: the dispatcher of a new api hands them over.
    workerQueries.length = 0;
    const api = await startApi({ config: worker.config, vault: worker.vault, adapters: createAdapters(worker.config) });
    try {
      await until(
        'premium',
        () => call(api.apiRoot, '/v1/sdk/subscribers/cost_user', pk),
        // The workflow's write, not the provisional answer the receipt already gives.
        (r) => confirmedPremium(r.body),
        30_000,
      );
      const handle = worker.client.workflow.getHandle(lifecycleWorkflowId(t.tenant_id, 'psp_a', checkout.customer_id));
      // The history up to the write's workflow task completing (the entitlement may commit a moment before).
      const history = await until(
        'the workflow task completed',
        () => handle.fetchHistory(),
        (h) => (h.events ?? []).some((e) => e.markerRecordedEventAttributes),
      );
      const events = history.events ?? [];
      const count = (attr: keyof (typeof events)[number]) => events.filter((e) => !!e[attr]).length;
      expect({
        signals: count('workflowExecutionSignaledEventAttributes'),
        workflowTasks: count('workflowTaskCompletedEventAttributes'),
        localActivities: count('markerRecordedEventAttributes'),
        activities: count('activityTaskScheduledEventAttributes'),
        timers: count('timerStartedEventAttributes'),
      }).toEqual({ signals: 1, workflowTasks: 1, localActivities: 1, activities: 0, timers: 0 });

      // The write: one tenant transaction on the worker's connection, each statement one round trip. A new
      // test-mode user's entitlement upsert also answers whether its provider had a sandbox row before (no round
      // trip more); the provider's first one adds the readiness note.
      const statement = (q: string) => q.split('(')[0].trim().split(/\s+/).slice(0, 3).join(' ');
      expect(workerQueries.map(statement)).toEqual([
        'BEGIN; select set_config',
        // The subscription's upsert, marking the batch's deliveries processed in the same statement.
        'with s as',
        // The entitlement's upsert, removing the user's provisional access in the same statement.
        'with superseded as',
        'select outbound_wanted',
        'COMMIT;',
        // The buyer's premium waiters woken once the write has committed, outside the transaction
        // (db/entitlement-notify.ts): the commit holds no server-wide notify lock.
        'select pg_notify',
      ]);
    } finally {
      await api.close();
    }
  }, 90_000);
});
