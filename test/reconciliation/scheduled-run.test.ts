import { confirmedPremium } from '../helpers/premium';
import crypto from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ProviderId } from '../../domain/providers';
import type { RunningEmulator } from '../../emulators/common/host';
import { reconciliationRepairs } from '../../runtime/metrics';
import { ensureTenantReconciliationSchedules } from '../../temporal/reconciliation-schedules';
import { reconciliationProgressQuery } from '../../workflows/reconciliation-run';
import { call, newTenant, startApi } from '../helpers/api';
import { sellOnWebProvider } from '../helpers/connections';
import { appDb, testDb } from '../helpers/db';
import { useEmulatorStack } from '../helpers/emulator-stack';
import type { startTestWorker } from '../helpers/temporal';
import { until } from '../helpers/until';
import { triggerScheduledRun } from '../helpers/scheduled-runs';
import { closedPort } from '../helpers/closed-port';

describe('scheduled reconciliation: a cancellation whose webhook was dropped is repaired by the schedule', () => {
  let emulators: Record<ProviderId, RunningEmulator>;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  const triggerRun = (tenantId: string) =>
    triggerScheduledRun(worker.client, tenantId, 'web', () =>
      ensureTenantReconciliationSchedules(worker.client, worker.taskQueue, appDb(), tenantId),
    );
  let api: Awaited<ReturnType<typeof startApi>>;
  const stack = useEmulatorStack();
  let a: Awaited<ReturnType<typeof newTenant>>;
  let b: Awaited<ReturnType<typeof newTenant>>;
  let lost: string;
  const userA = 'sched_a1';
  const userB = 'sched_b1';

  const sdk = async (t: { publishable_key: string }, u: string) =>
    (await call(api.apiRoot, `/v1/sdk/subscribers/${u}`, t.publishable_key)).body;
  const control = (path: string, body: unknown) =>
    fetch(`${emulators.psp_a.url}/__control/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: await r.json() }));

  /** A buyer whose purchase the service heard (premium), then canceled at the provider with every notification dropped. */
  async function buyThenCancelSilently(t: Awaited<ReturnType<typeof newTenant>>, account: string, user: string) {
    const bought = await control('checkout', {
      sku: 'pro_monthly',
      email: `${user}@example.com`,
      target: `${api.dashboardRoot}/api/webhooks/psp_a`,
      account,
      mode: 'test',
      app_user_id: user,
    });
    expect(bought.status).toBe(200);
    await until(`${user} premium`, () => sdk(t, user), confirmedPremium, 30_000);
    const sub = await testDb()('subscriptions').where({ tenant_id: t.tenant_id, app_user_id: user }).first();
    expect(sub.status).toBe('active');
    // The provider cancels it now; the notification goes to a closed port: the service never hears.
    const canceled = await control('events', {
      type: 'customer.subscription.deleted',
      data: { id: sub.external_id },
      target: lost,
      account,
      mode: 'test',
    });
    expect(canceled.body.status).not.toBe(200);
    return sub.external_id as string;
  }

  beforeAll(async () => {
    ({ emulators, worker, api } = stack);
    lost = `http://127.0.0.1:${await closedPort()}/api/webhooks/psp_a`;
    a = await newTenant('reconcile-scheduled-a');
    b = await newTenant('reconcile-scheduled-b');
    const accountA = (
      await sellOnWebProvider({ emulatorUrl: emulators.psp_a.url, vault: worker.vault, apiUrl: api.apiUrl, tenant: a })
    ).account;
    const accountB = (
      await sellOnWebProvider({ emulatorUrl: emulators.psp_a.url, vault: worker.vault, apiUrl: api.apiUrl, tenant: b })
    ).account;
    // An endpoint of A that wants every event: the repair is told to it as subscription.reconciled.
    await testDb()('webhook_endpoints').insert({
      tenant_id: a.tenant_id,
      url: 'https://receiver.example.test/hook',
      secret_enc: 'v1:unused',
      task_queue: `nobody-${crypto.randomUUID()}`,
    });
    await buyThenCancelSilently(a, accountA, userA);
    await buyThenCancelSilently(b, accountB, userB);
    // What the api process and a proof run: both tenants get their schedules (the proof may have
    // made or moved them already, so the first answer is any of three), and asking again changes nothing.
    for (const t of [a, b]) {
      const first = await ensureTenantReconciliationSchedules(worker.client, worker.taskQueue, appDb(), t.tenant_id);
      expect(['created', 'updated', 'unchanged']).toContain(first.web);
      expect(first.stores).toBe('none');
      expect(await ensureTenantReconciliationSchedules(worker.client, worker.taskQueue, appDb(), t.tenant_id)).toEqual({
        web: 'unchanged',
        stores: 'none',
      });
    }
  });

  it('the run repairs A (access ended, recorded under the run, told as subscription.reconciled, counted) and reads nothing of B', async () => {
    expect((await sdk(a, userA)).is_premium).toBe(true);
    const counted = async () =>
      (await reconciliationRepairs.get()).values.find((v) => v.labels.provider === 'psp_a')?.value ?? 0;
    const countedBefore = await counted();
    // Count the emulator's calls by credential during A's run: only A's key may appear.
    await control('rate-limit', { enabled: true, limit: 1_000_000, window_ms: 1000 });
    const { workflowId, progress } = await triggerRun(a.tenant_id);
    const calls = await (await fetch(`${emulators.psp_a.url}/__control/rate-limit`)).json();
    await fetch(`${emulators.psp_a.url}/__control/rate-limit`, { method: 'DELETE' });
    expect(calls.scopes).toHaveLength(1);
    expect(workflowId.startsWith(`reconcile-${a.tenant_id}-web-`)).toBe(true);
    // One candidate customer (A's buyer, recently active): B's never enters A's run.
    expect(progress).toMatchObject({ group: 'web', customers: 1, compared: 1, repaired: 1, done: true });

    await until(
      `${userA} no longer premium`,
      () => sdk(a, userA),
      (x) => x.is_premium === false,
      30_000,
    );
    const ent = await testDb()('entitlements').where({ tenant_id: a.tenant_id, app_user_id: userA }).first();
    expect(ent.state).toBe('expired');
    const listed = await call(api.apiUrl, `/reconciliations?run_id=${progress.run_id}`, a.secret_key);
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual([
      expect.objectContaining({
        run_id: progress.run_id,
        provider: 'psp_a',
        app_user_id: userA,
        held: expect.objectContaining({ status: 'active' }),
        provider_state: expect.objectContaining({ status: 'canceled' }),
        applied: [
          { id: expect.stringMatching(/^rec_start_/), kind: 'subscription_created' },
          { id: expect.stringMatching(/^rec_canceled_/), kind: 'subscription_canceled' },
        ],
      }),
    ]);
    const told = await testDb()('outbound_events').where({ tenant_id: a.tenant_id, type: 'subscription.reconciled' });
    expect(told.map((e) => e.body.data.reconciliation_id)).toEqual([listed.body.data[0].id]);
    expect(told[0].body.data).toMatchObject({ run_id: progress.run_id, app_user_id: userA });
    expect(await counted()).toBe(countedBefore + 1);
    // The customer's timeline names the scheduled run's own workflow.
    const story = (await call(api.apiUrl, `/customers/${userA}`, a.secret_key)).body.timeline.data;
    expect(story.filter((e: { kind: string }) => e.kind === 'reconciliation_repair')).toEqual([
      expect.objectContaining({ workflow_id: workflowId }),
    ]);
    // The progress query answers what the run did (ids and counts only).
    expect(await worker.client.workflow.getHandle(workflowId).query(reconciliationProgressQuery)).toEqual(progress);

    // B: nothing recorded, nothing repaired, still (wrongly) premium until its own run.
    expect((await call(api.apiUrl, '/reconciliations', b.secret_key)).body.data).toEqual([]);
    expect(await testDb()('reconciliations').where({ tenant_id: b.tenant_id })).toHaveLength(0);
    expect((await sdk(b, userB)).is_premium).toBe(true);
    // A's run is not B's to list either.
    expect((await call(api.apiUrl, `/reconciliations?run_id=${progress.run_id}`, b.secret_key)).body.data).toEqual([]);
  });

  it('a second run over the unchanged state compares again and records nothing', async () => {
    const before = await testDb()('reconciliations').where({ tenant_id: a.tenant_id });
    const { progress } = await triggerRun(a.tenant_id);
    expect(progress).toMatchObject({ customers: 1, compared: 1, repaired: 0, done: true });
    expect(await testDb()('reconciliations').where({ tenant_id: a.tenant_id })).toEqual(before);
    expect(
      await testDb()('outbound_events').where({ tenant_id: a.tenant_id, type: 'subscription.reconciled' }),
    ).toHaveLength(1);
    expect((await sdk(a, userA)).is_premium).toBe(false);
  });

  it("B's own run repairs B only", async () => {
    const aBefore = await testDb()('reconciliations').where({ tenant_id: a.tenant_id });
    const { progress } = await triggerRun(b.tenant_id);
    expect(progress).toMatchObject({ customers: 1, repaired: 1 });
    await until(
      `${userB} no longer premium`,
      () => sdk(b, userB),
      (x) => x.is_premium === false,
      30_000,
    );
    expect(await testDb()('reconciliations').where({ tenant_id: a.tenant_id })).toEqual(aBefore);
  });

  it('a run started by hand under another tenant’s attribute is refused before it reads anything', async () => {
    const { TENANT_ATTR, KIND_ATTR } = await import('../../workflows/search-attributes');
    const { reconciliationRunWorkflow } = await import('../../workflows/reconciliation-run');
    const handle = await worker.client.workflow.start(reconciliationRunWorkflow, {
      taskQueue: worker.taskQueue,
      workflowId: `reconcile-${a.tenant_id}-web-forged-${crypto.randomUUID()}`,
      args: [],
      typedSearchAttributes: [
        { key: TENANT_ATTR, value: b.tenant_id },
        { key: KIND_ATTR, value: 'reconciliation' },
      ],
    });
    await expect(handle.result()).rejects.toThrow();
  });
});
