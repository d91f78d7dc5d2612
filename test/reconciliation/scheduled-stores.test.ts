import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconciliationSettings } from '../../db/reconciliation-settings';
import { withTenant } from '../../db/tenant-tx';
import { reconciliationScheduleId, type ReconciliationGroup } from '../../domain/reconciliation-schedule';
import {
  ensureReconciliationSchedule,
  ensureTenantReconciliationSchedules,
} from '../../temporal/reconciliation-schedules';
import { call } from '../helpers/api';
import { appDb, testDb } from '../helpers/db';
import { confirmedPremium } from '../helpers/premium';
import { startStoreStack, type StoreStack } from '../helpers/stores';
import { until } from '../helpers/until';
import { triggerScheduledRun } from '../helpers/scheduled-runs';
import { closedPort } from '../helpers/closed-port';

/**
 * The tenant's stores schedule (`reconcile-<tenant>-stores`, docs/reconciliation.md): a Play
 * purchase registered by the SDK is revoked at the store with its RTDN lost; the web schedule's
 * run asks the store nothing (web runs name no stores), the stores schedule's run re-reads the
 * purchase from Play, ends the access and records the repair under its own run.
 */
describe('scheduled reconciliation: the stores schedule re-reads a store purchase whose notification was dropped', () => {
  let s: StoreStack;
  // Each schedule aimed at this file's worker just before its trigger (test/helpers/scheduled-runs.ts).
  const triggerRun = (group: ReconciliationGroup) =>
    triggerScheduledRun(s.worker.client, s.tenant.tenant_id, group, async () =>
      ensureReconciliationSchedule(
        s.worker.client,
        s.worker.taskQueue,
        s.tenant.tenant_id,
        group,
        await withTenant(appDb(), s.tenant.tenant_id, (trx) => reconciliationSettings(trx)),
      ),
    );
  let playToken: string;
  const user = 'sched_play_1';

  const sdk = async () => (await s.subscriber(user)).body;
  /** The Play emulator's request counters (its rate limiter, switched on with a limit nothing reaches). */
  const playCalls = async (): Promise<number> =>
    (
      (await (await fetch(`${s.emulators.store_android.url}/__control/rate-limit`)).json()) as {
        totals?: { accepted: number };
        scopes: { accepted: number }[];
      }
    ).scopes.reduce((n, x) => n + x.accepted, 0);
  const countPlayCalls = async () => {
    await fetch(`${s.emulators.store_android.url}/__control/rate-limit`, { method: 'DELETE' });
    await fetch(`${s.emulators.store_android.url}/__control/rate-limit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ enabled: true, limit: 1_000_000, window_ms: 1000 }),
    });
  };

  beforeAll(async () => {
    s = await startStoreStack('reconcile-scheduled-stores');
    const lost = `http://127.0.0.1:${await closedPort()}/api/webhooks/store_android`;
    ({ purchase_token: playToken } = await s.control.store_android<{ purchase_token: string }>(
      'POST',
      '/sandbox-purchase',
      { product_id: 'premium_monthly', account: s.accounts.store_android, app_user_id: user },
    ));
    const registered = await s.register({
      app_user_id: user,
      provider: 'store_android',
      product_id: 'premium_monthly',
      purchase_token: playToken,
    });
    expect(registered.body.is_premium).toBe(true);
    // Premium may answer provisionally first: act on what the workflow wrote only once it is confirmed.
    await until('premium confirmed', sdk, confirmedPremium, 30_000);
    // Play revokes it; its RTDN goes to a closed port: the service never hears.
    const sent = await s.control.store_android<{ status: number }>('POST', '/events', {
      type: 'SUBSCRIPTION_REVOKED',
      target: lost,
      account: s.accounts.store_android,
      data: { purchaseToken: playToken },
    });
    expect(sent.status).not.toBe(200);
    expect((await sdk()).is_premium).toBe(true);
    // The stack's tenant has store connections only: it gets the stores schedule, no web one.
    // (The proof may have made it already: the first answer is any of three; asking again changes nothing.)
    const first = await ensureTenantReconciliationSchedules(
      s.worker.client,
      s.worker.taskQueue,
      appDb(),
      s.tenant.tenant_id,
    );
    expect(first.web).toBe('none');
    expect(['created', 'updated', 'unchanged']).toContain(first.stores);
    expect(
      await ensureTenantReconciliationSchedules(s.worker.client, s.worker.taskQueue, appDb(), s.tenant.tenant_id),
    ).toEqual({ web: 'none', stores: 'unchanged' });
    // A web schedule as a tenant with a proven web connection would have, to show its run leaves the stores alone.
    const settings = await withTenant(appDb(), s.tenant.tenant_id, (trx) => reconciliationSettings(trx));
    expect(
      await ensureReconciliationSchedule(s.worker.client, s.worker.taskQueue, s.tenant.tenant_id, 'web', settings),
    ).toBe('created');
  });
  afterAll(async () => {
    await fetch(`${s?.emulators.store_android.url}/__control/rate-limit`, { method: 'DELETE' }).catch(() => undefined);
    for (const g of ['web', 'stores'] as const)
      await s?.worker.client.schedule
        .getHandle(reconciliationScheduleId(s.tenant.tenant_id, g))
        .delete()
        .catch(() => undefined);
    await s?.close();
  });

  it('the web run asks Play nothing and repairs nothing', async () => {
    await countPlayCalls();
    const { workflowId, progress } = await triggerRun('web');
    expect(workflowId.startsWith(`reconcile-${s.tenant.tenant_id}-web-`)).toBe(true);
    expect(progress).toMatchObject({ group: 'web', compared: 0, repaired: 0, done: true });
    expect(await playCalls()).toBe(0);
    expect(await testDb()('reconciliations').where({ tenant_id: s.tenant.tenant_id })).toHaveLength(0);
    expect((await sdk()).is_premium).toBe(true);
  });

  it('the stores run re-reads the purchase at Play, ends the access and records the repair under the run', async () => {
    await countPlayCalls();
    const { workflowId, progress } = await triggerRun('stores');
    expect(workflowId.startsWith(`reconcile-${s.tenant.tenant_id}-stores-`)).toBe(true);
    expect(progress).toMatchObject({ group: 'stores', customers: 1, compared: 1, repaired: 1, done: true });
    expect(await playCalls()).toBeGreaterThan(0);
    await until(`${user} no longer premium`, sdk, (b) => b.is_premium === false, 30_000);
    const listed = await call(s.api.apiUrl, `/reconciliations?run_id=${progress.run_id}`, s.tenant.secret_key);
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual([
      expect.objectContaining({
        run_id: progress.run_id,
        provider: 'store_android',
        app_user_id: user,
        held: expect.objectContaining({ status: 'active' }),
        provider_state: expect.objectContaining({ status: 'expired' }),
        applied: [expect.objectContaining({ kind: 'expired' })],
      }),
    ]);
    // The customer's timeline names the scheduled run's own workflow; the token is in no repair.
    const story = (await call(s.api.apiUrl, `/customers/${user}`, s.tenant.secret_key)).body.timeline.data;
    expect(story.filter((e: { kind: string }) => e.kind === 'reconciliation_repair')).toEqual([
      expect.objectContaining({ workflow_id: workflowId }),
    ]);
    expect(JSON.stringify(listed.body)).not.toContain(playToken);
  });
});
