import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ScheduleNotFoundError, type Client } from '@temporalio/client';
import { createConnection } from '../../db/connection-service';
import { withTenant } from '../../db/tenant-tx';
import type { ProviderId, WebProviderId } from '../../domain/providers';
import { reconciliationScheduleId, type ReconciliationGroup } from '../../domain/reconciliation-schedule';
import type { RunningEmulator } from '../../emulators/common/host';
import { createEmulatorAccount } from '../../seed/demo-providers';
import { ensureTenantReconciliationSchedules } from '../../temporal/reconciliation-schedules';
import { connectTemporal } from '../../temporal/client';
import { ensureNamespace } from '../../temporal/postgres-server';
import { startConnectionProof } from '../../temporal/workflow-starts';
import { call, keyWith, newTenant, refill, startApi } from '../helpers/api';
import { startApiProcess, type ApiProcess } from '../helpers/api-process';
import { createProvenConnection } from '../helpers/connections';
import { appDb, testDb } from '../helpers/db';
import { useEmulatorStack } from '../helpers/emulator-stack';
import type { startTestWorker } from '../helpers/temporal';
import { until } from '../helpers/until';

const HOUR = 3_600_000;
const everyOf = (d: { spec: { intervals?: { every: number }[] } }) => d.spec.intervals?.[0]?.every;

/**
 * The reconciliation Schedules (temporal/reconciliation-schedules.ts): made per tenant and group
 * when the api process starts, following the tenant's settings (GET/PATCH
 * /v1/reconciliation/settings), and when a connection is proven. Checked on the dev server's
 * Schedules API (the time-skipping server does not serve it): the interval is the spec's; the run
 * itself is triggered in scheduled-run.test.ts.
 */
describe('reconciliation schedules per tenant, and their settings', () => {
  let emulators: Record<ProviderId, RunningEmulator>;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let api: Awaited<ReturnType<typeof startApi>>;
  const stack = useEmulatorStack();
  let both: Awaited<ReturnType<typeof newTenant>>;
  let webOnly: Awaited<ReturnType<typeof newTenant>>;
  let unproven: Awaited<ReturnType<typeof newTenant>>;
  let proc: ApiProcess | undefined;

  // `client`: the worker's (the default namespace) unless a test names its own.
  const describeSchedule = (tenantId: string, group: ReconciliationGroup, client: Client = worker.client) =>
    client.schedule.getHandle(reconciliationScheduleId(tenantId, group)).describe();
  const missing = async (tenantId: string, group: ReconciliationGroup, client: Client = worker.client) =>
    describeSchedule(tenantId, group, client).then(
      () => false,
      (e) => e instanceof ScheduleNotFoundError,
    );
  const settings = (key: string, body?: unknown) =>
    call(api.apiUrl, '/reconciliation/settings', key, body ? { method: 'PATCH', body: JSON.stringify(body) } : {});

  async function connect(tenantId: string, provider: ProviderId, proven: boolean) {
    const acct = await createEmulatorAccount(emulators[provider].url);
    const input = {
      provider,
      account_ref: acct.account,
      credentials: acct.credentials,
      ...(acct.webhook_secret ? { webhook_secret: acct.webhook_secret } : {}),
    };
    return withTenant(testDb(), tenantId, (trx) =>
      proven ? createProvenConnection(trx, worker.vault, input) : createConnection(trx, worker.vault, input),
    );
  }

  beforeAll(async () => {
    ({ emulators, worker, api } = stack);
    both = await newTenant('schedules-both');
    webOnly = await newTenant('schedules-web');
    unproven = await newTenant('schedules-none');
    await connect(both.tenant_id, 'psp_a', true);
    await connect(both.tenant_id, 'store_ios', true);
    await connect(webOnly.tenant_id, 'psp_b', true);
    await connect(unproven.tenant_id, 'psp_a', false);
  });
  afterAll(async () => {
    await proc?.stop();
  });

  it('the api process, as it starts, gives every tenant with a proven connection its schedules, with the defaults', async () => {
    // A namespace and task queue of its own: the process ensures every tenant of the run's database,
    // and the other test files' sweeps and schedules stay on their own workers.
    const namespace = `schedules-${crypto.randomBytes(4).toString('hex')}`;
    const taskQueue = `${worker.taskQueue}-start`;
    await ensureNamespace(inject('temporalAddress'), namespace);
    const own = await connectTemporal(inject('temporalAddress'), namespace, worker.vault);
    proc = await startApiProcess({
      TEMPORAL_NAMESPACE: namespace,
      TEMPORAL_TASK_QUEUE: taskQueue,
      MASTER_KEY: worker.config.masterKey,
      TENANT_SCHEDULES_AT_START: '1',
    });
    const web = await until(
      'the web schedule',
      () => describeSchedule(both.tenant_id, 'web', own.client).catch(() => null),
      (d) => d !== null,
      60_000,
    );
    expect(web!.spec.intervals).toEqual([{ every: HOUR, offset: expect.any(Number) }]);
    expect(web!.action).toMatchObject({
      type: 'startWorkflow',
      workflowType: 'reconciliationRunWorkflow',
      workflowId: reconciliationScheduleId(both.tenant_id, 'web'),
      taskQueue,
      args: [],
    });
    expect(web!.policies).toMatchObject({ overlap: 'SKIP', catchupWindow: HOUR });
    expect(web!.state.paused).toBe(false);
    // The first run comes an interval after the schedule was made, never at once.
    expect(web!.spec.startAt!.getTime()).toBeGreaterThan(Date.now() + HOUR / 2);
    const stores = await until(
      'the stores schedule',
      () => describeSchedule(both.tenant_id, 'stores', own.client).catch(() => null),
      (d) => d !== null,
      60_000,
    );
    expect(stores!.spec.intervals).toEqual([{ every: 24 * HOUR, offset: expect.any(Number) }]);
    await until(
      'the web-only tenant’s schedule',
      () => describeSchedule(webOnly.tenant_id, 'web', own.client).catch(() => null),
      (d) => d !== null,
      60_000,
    );
    // A group without a proven connection has none; a tenant without any has none at all.
    expect(await missing(webOnly.tenant_id, 'stores', own.client)).toBe(true);
    expect(await missing(unproven.tenant_id, 'web', own.client)).toBe(true);
    expect(await missing(unproven.tenant_id, 'stores', own.client)).toBe(true);
    // Ensuring again (the next process start) finds them as the settings say and changes nothing.
    expect(await ensureTenantReconciliationSchedules(own.client, taskQueue, appDb(), both.tenant_id)).toEqual({
      web: 'unchanged',
      stores: 'unchanged',
    });
    const again = await describeSchedule(both.tenant_id, 'web', own.client);
    expect(again.spec).toEqual(web!.spec);
    await own.connection.close();
  });

  it('GET answers the defaults; PATCH changes the interval and the schedule follows; enabled false pauses both', async () => {
    const read = await settings(both.secret_key);
    expect(read.status).toBe(200);
    expect(read.body).toEqual({
      object: 'reconciliation_settings',
      enabled: true,
      web_interval_minutes: 60,
      stores_interval_minutes: 1440,
      updated_at: null,
    });
    const changed = await settings(both.secret_key, { web_interval_minutes: 30, stores_interval_minutes: 720 });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ enabled: true, web_interval_minutes: 30, stores_interval_minutes: 720 });
    expect(everyOf(await describeSchedule(both.tenant_id, 'web'))).toBe(HOUR / 2);
    expect(everyOf(await describeSchedule(both.tenant_id, 'stores'))).toBe(12 * HOUR);
    expect((await describeSchedule(both.tenant_id, 'web')).policies.catchupWindow).toBe(HOUR / 2);

    const off = await settings(both.secret_key, { enabled: false });
    expect(off.body).toMatchObject({ enabled: false, web_interval_minutes: 30 });
    for (const g of ['web', 'stores'] as const) {
      const d = await describeSchedule(both.tenant_id, g);
      expect([g, d.state.paused, d.state.note]).toEqual([g, true, expect.stringContaining('turned')]);
    }
    await settings(both.secret_key, { enabled: true });
    expect((await describeSchedule(both.tenant_id, 'web')).state.paused).toBe(false);
    // The audit trail names the change.
    const audit = await testDb()('audit_entries').where({
      tenant_id: both.tenant_id,
      action: 'reconciliation_settings.update',
    });
    expect(audit.length).toBe(3);
    await refill(both.tenant_id);
  });

  it('bad input: out of bounds or unknown fields are refused with the field, and nothing changes', async () => {
    for (const body of [
      { web_interval_minutes: 5 },
      { web_interval_minutes: 100_000 },
      { stores_interval_minutes: 30 },
      { web_interval_minutes: 30.5 },
      { enabled: 'yes' },
      { interval: 60 },
    ]) {
      const r = await settings(both.secret_key, body);
      expect([JSON.stringify(body), r.status, r.body.error]).toEqual([JSON.stringify(body), 400, 'invalid_request']);
    }
    expect((await settings(both.secret_key)).body).toMatchObject({ web_interval_minutes: 30, enabled: true });
    expect(everyOf(await describeSchedule(both.tenant_id, 'web'))).toBe(HOUR / 2);
    await refill(both.tenant_id);
  });

  it('scopes: imports:read reads, imports:write changes; neither suffices for the other', async () => {
    const reader = await keyWith(both.tenant_id, ['imports:read']);
    const writer = await keyWith(both.tenant_id, ['imports:write']);
    expect((await settings(reader.secret_key)).status).toBe(200);
    const refused = await settings(reader.secret_key, { web_interval_minutes: 45 });
    expect([refused.status, refused.body.error]).toEqual([403, 'insufficient_scope']);
    expect((await settings(writer.secret_key)).status).toBe(403);
    expect((await settings(writer.secret_key, { web_interval_minutes: 30 })).status).toBe(200);
  });

  it("cross-tenant: another tenant's settings change moves only its own schedule", async () => {
    const r = await settings(webOnly.secret_key, { web_interval_minutes: 120, enabled: false });
    expect(r.status).toBe(200);
    expect(everyOf(await describeSchedule(webOnly.tenant_id, 'web'))).toBe(2 * HOUR);
    expect((await describeSchedule(webOnly.tenant_id, 'web')).state.paused).toBe(true);
    // The first tenant's settings and schedules are as it left them.
    expect((await settings(both.secret_key)).body).toMatchObject({ web_interval_minutes: 30, enabled: true });
    const mine = await describeSchedule(both.tenant_id, 'web');
    expect([everyOf(mine), mine.state.paused]).toEqual([HOUR / 2, false]);
    // Each tenant's row is its own.
    const rows = await testDb()('reconciliation_settings').whereIn('tenant_id', [both.tenant_id, webOnly.tenant_id]);
    expect(rows.map((x) => [x.tenant_id, x.web_interval_minutes]).sort()).toEqual(
      [
        [both.tenant_id, 30],
        [webOnly.tenant_id, 120],
      ].sort(),
    );
  });

  it('a connection proven now gets its tenant the schedule at once (the proof workflow ensures it)', async () => {
    const t = await newTenant('schedules-proof');
    const provider: WebProviderId = 'psp_a';
    const conn = await connect(t.tenant_id, provider, false);
    expect(await missing(t.tenant_id, 'web')).toBe(true);
    const proof = await startConnectionProof(
      worker.client,
      worker.taskQueue,
      t.tenant_id,
      conn.id,
      crypto.randomUUID(),
    );
    const outcomes = await proof.result();
    expect(outcomes.every((o) => o.reachable)).toBe(true);
    const d = await describeSchedule(t.tenant_id, 'web');
    expect(everyOf(d)).toBe(HOUR);
    expect(await missing(t.tenant_id, 'stores')).toBe(true);
  });
});
