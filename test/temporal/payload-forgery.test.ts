import crypto from 'node:crypto';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import type { LifecycleEvent } from '../../domain/subscription';
import { logger } from '../../runtime/logger';
import { payloadRefusals } from '../../runtime/metrics';
import { findTemporalBinary } from '../../temporal/binary';
import { dataConverterFor } from '../../temporal/payload-codec';
import { lifecycleWorkflowId, signalLifecycleBatch } from '../../temporal/workflow-starts';
import { generateMasterKey } from '../../vault/vault';
import { newTenant } from '../helpers/api';
import { testDb } from '../helpers/db';
import { startTestWorker } from '../helpers/temporal';
import { until } from '../helpers/until';

const { temporal } = proto;
const refusals = async (reason: string) =>
  (await payloadRefusals.get()).values.find((v) => v.labels.reason === reason)?.value ?? 0;
const cli = (() => {
  try {
    return findTemporalBinary({ build: false });
  } catch {
    return null;
  }
})();

/**
 * Someone who reaches Temporal's frontend port, without MASTER_KEY, against a real worker: a
 * hand-over written in plaintext (the Temporal CLI, a bare @temporalio/client) or a ciphertext
 * copied from another workflow's history must not make anyone premium. The workflow task that
 * meets one fails (Temporal retries it; each attempt is refused again), so nothing of it is applied.
 */
describe('forged and copied Temporal payloads', () => {
  let w: Awaited<ReturnType<typeof startTestWorker>>;
  let plainConnection: Connection;
  /** What an attacker has: a client with no codec. */
  let plain: Client;
  let tenantId: string;

  const created = (customer: string, appUserId: string, at = new Date()): LifecycleEvent => ({
    id: `evt_${crypto.randomBytes(6).toString('hex')}`,
    kind: 'subscription_created',
    occurred_at: at.toISOString(),
    mode: 'test',
    subscription_id: `sub_${customer}`,
    customer_id: customer,
    app_user_id: appUserId,
    current_period_end: new Date(at.getTime() + 30 * 86_400_000).toISOString(),
  });
  const entitlement = (appUserId: string) =>
    testDb()('entitlements').where({ tenant_id: tenantId, app_user_id: appUserId }).first();
  const rawEvents = async (workflowId: string) =>
    (await plain.workflowService.getWorkflowExecutionHistory({ namespace: 'default', execution: { workflowId } }))
      .history?.events ?? [];
  const failedTasks = async (workflowId: string) =>
    (await rawEvents(workflowId))
      .filter((e) => e.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED)
      .map((e) => e.workflowTaskFailedEventAttributes?.failure?.message ?? '');
  /**
   * Whichever comes first: the workflow task failing (its failure messages) or the forged event
   * applied (the user's entitlement active). Then nothing more may be applied: no write marker in
   * the history, no completed workflow task after the forgery, no entitlement.
   */
  async function outcomeOf(workflowId: string, appUserId: string) {
    const first = await until(
      `${workflowId}: a failed workflow task, or the forgery applied`,
      async () => ({
        failures: await failedTasks(workflowId),
        entitlement: (await entitlement(appUserId))?.state ?? null,
      }),
      (o) => o.failures.length > 0 || o.entitlement === 'active',
      30_000,
    );
    expect(first.entitlement, 'the forged event was applied').not.toBe('active');
    // The task is failed before any write could run. Once the worker has taken the task again
    // (a second attempt) and refused it again, the forgery has still written nothing.
    await until(
      `${workflowId}: the workflow task retried`,
      async () => {
        const d = await plain.workflowService.describeWorkflowExecution({
          namespace: 'default',
          execution: { workflowId },
        });
        return d.pendingWorkflowTask?.attempt ?? 0;
      },
      (attempt) => attempt >= 2,
      30_000,
    );
    expect((await entitlement(appUserId))?.state ?? null).not.toBe('active');
    return first.failures;
  }
  /** For a workflow that only ever saw forgeries: no write, and no workflow task got through. */
  async function nothingRecorded(workflowId: string) {
    const events = await rawEvents(workflowId);
    expect(events.filter((e) => e.markerRecordedEventAttributes || e.activityTaskScheduledEventAttributes)).toEqual([]);
    expect(events.some((e) => e.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED)).toBe(
      false,
    );
  }

  beforeAll(async () => {
    w = await startTestWorker();
    plainConnection = await Connection.connect({ address: inject('temporalAddress') });
    plain = new Client({ connection: plainConnection, namespace: 'default', identity: 'forger' });
    tenantId = (await newTenant('forgery')).tenant_id;
  });
  afterAll(async () => {
    await w?.stop();
    await plainConnection?.close();
  });

  it('the same hand-over through the service’s own client does make its user premium (what the forgeries below attempt)', async () => {
    const customer = `cus_ok_${crypto.randomBytes(4).toString('hex')}`;
    await signalLifecycleBatch(w.client, w.taskQueue, { tenantId, provider: 'psp_a', customerKey: customer }, [
      created(customer, `${customer}_user`),
    ]);
    await until(
      'the entitlement',
      () => entitlement(`${customer}_user`),
      (r) => r?.state === 'active',
    );
  });

  it('a plaintext signal-with-start of customer-<tenant>-… from a client without the codec fails its workflow task; nobody becomes premium', async () => {
    const customer = `cus_forged_${crypto.randomBytes(4).toString('hex')}`;
    const workflowId = lifecycleWorkflowId(tenantId, 'psp_a', customer);
    const before = await refusals('plaintext');
    await plain.workflow.signalWithStart('customerLifecycleWorkflow', {
      taskQueue: w.taskQueue,
      workflowId,
      args: [{ tenantId, provider: 'psp_a', customerKey: customer }],
      signal: 'handover',
      signalArgs: [{ tenantId, events: [created(customer, `${customer}_user`)] }],
    });
    expect((await outcomeOf(workflowId, `${customer}_user`))[0]).toMatch(
      /unencrypted payload was refused.*TEMPORAL_ALLOW_PLAINTEXT_PAYLOADS=1/,
    );
    expect(await entitlement(`${customer}_user`)).toBeUndefined();
    await nothingRecorded(workflowId);
    expect(await refusals('plaintext')).toBeGreaterThan(before);
  });

  it('a plaintext signal into a running customer workflow fails its workflow task; the forged event is not applied', async () => {
    const customer = `cus_live_${crypto.randomBytes(4).toString('hex')}`;
    const workflowId = lifecycleWorkflowId(tenantId, 'psp_a', customer);
    await signalLifecycleBatch(w.client, w.taskQueue, { tenantId, provider: 'psp_a', customerKey: customer }, [
      created(customer, `${customer}_real`),
    ]);
    await until(
      'the real purchase applied',
      () => entitlement(`${customer}_real`),
      (r) => r?.state === 'active',
    );
    await plain.workflow.getHandle(workflowId).signal('handover', {
      tenantId,
      events: [{ ...created(customer, `${customer}_forged`), subscription_id: `sub_${customer}_2` }],
    });
    expect((await outcomeOf(workflowId, `${customer}_forged`))[0]).toMatch(/unencrypted payload was refused/);
    expect(await entitlement(`${customer}_forged`)).toBeUndefined();
  });

  it.runIf(cli)(
    'the report’s probe, with the Temporal CLI: start, then signal a forged hand-over as JSON; nobody becomes premium',
    async () => {
      const customer = `cus_cli_${crypto.randomBytes(4).toString('hex')}`;
      const workflowId = lifecycleWorkflowId(tenantId, 'psp_a', customer);
      const temporalCli = (...args: string[]) =>
        promisify(execFile)(cli!, [...args, '--address', inject('temporalAddress'), '--namespace', 'default'], {
          timeout: 30_000,
        });
      await temporalCli(
        'workflow',
        'start',
        '--type',
        'customerLifecycleWorkflow',
        '--task-queue',
        w.taskQueue,
        '--workflow-id',
        workflowId,
        '--input',
        JSON.stringify({ tenantId, provider: 'psp_a', customerKey: customer }),
      );
      await temporalCli(
        'workflow',
        'signal',
        '--workflow-id',
        workflowId,
        '--name',
        'handover',
        '--input',
        JSON.stringify({ tenantId, events: [created(customer, `${customer}_user`)] }),
      );
      expect((await outcomeOf(workflowId, `${customer}_user`))[0]).toMatch(/unencrypted payload was refused/);
      expect(await entitlement(`${customer}_user`)).toBeUndefined();
      await nothingRecorded(workflowId);
    },
  );

  it('a ciphertext copied from one customer workflow into another fails authentication there: a refunded purchase is not granted again', async () => {
    const a = `cus_a_${crypto.randomBytes(4).toString('hex')}`;
    const user = `${a}_user`;
    const input = { tenantId, provider: 'psp_a', customerKey: a };
    const purchase = created(a, user, new Date(Date.now() - 60_000));
    await signalLifecycleBatch(w.client, w.taskQueue, input, [purchase]);
    await until(
      'the purchase',
      () => entitlement(user),
      (r) => r?.state === 'active',
    );
    await signalLifecycleBatch(w.client, w.taskQueue, input, [
      {
        id: `evt_refund_${a}`,
        kind: 'refunded',
        occurred_at: new Date().toISOString(),
        mode: 'test',
        subscription_id: purchase.subscription_id,
        customer_id: a,
      },
    ]);
    await until(
      'the refund',
      () => entitlement(user),
      (r) => r?.state === 'revoked',
    );

    // What the frontend hands anyone: the purchase's hand-over, as stored (ciphertext).
    const signals = (await rawEvents(lifecycleWorkflowId(tenantId, 'psp_a', a))).filter(
      (e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'handover',
    );
    const copied = signals[0].workflowExecutionSignaledEventAttributes!.input!.payloads!;
    const b = `cus_b_${crypto.randomBytes(4).toString('hex')}`;
    const target = lifecycleWorkflowId(tenantId, 'psp_a', b);
    await signalLifecycleBatch(w.client, w.taskQueue, { tenantId, provider: 'psp_a', customerKey: b }, []);
    const before = await refusals('authentication');
    await plain.workflowService.signalWorkflowExecution({
      namespace: 'default',
      workflowExecution: { workflowId: target },
      signalName: 'handover',
      input: { payloads: copied },
      identity: 'forger',
      requestId: crypto.randomUUID(),
    });
    expect((await outcomeOf(target, user))[0]).toMatch(/authentication failed.*copied from another workflow/);
    expect((await entitlement(user)).state).toBe('revoked');
    expect(await refusals('authentication')).toBeGreaterThan(before);
  });

  it('an unknown key id fails the workflow task loudly (error naming the id and MASTER_KEY, metric, error log) and proceeds once the key is back', async () => {
    const gone = `gone:${crypto.randomBytes(32).toString('base64')}`;
    const own = generateMasterKey();
    const first = await startTestWorker({ masterKey: own });
    const errors = vi.spyOn(logger, 'error');
    const other = new Client({
      connection: plainConnection,
      namespace: 'default',
      dataConverter: dataConverterFor(gone),
    });
    const customer = `cus_key_${crypto.randomBytes(4).toString('hex')}`;
    const workflowId = lifecycleWorkflowId(tenantId, 'psp_a', customer);
    const before = await refusals('unknown_key');
    try {
      await signalLifecycleBatch(other, first.taskQueue, { tenantId, provider: 'psp_a', customerKey: customer }, [
        created(customer, `${customer}_user`),
      ]);
      const failures = await outcomeOf(workflowId, `${customer}_user`);
      expect(failures[0]).toMatch(/key id "gone", which MASTER_KEY does not hold; put that entry back in MASTER_KEY/);
      expect(failures[0]).not.toContain(gone.split(':')[1]);
      expect(await refusals('unknown_key')).toBeGreaterThan(before);
      const logged = errors.mock.calls.find(([fields]) => (fields as { reason?: string }).reason === 'unknown_key');
      expect(logged?.[0]).toMatchObject({ key_id: 'gone', workflow_id: workflowId, namespace: 'default' });
      expect(String(logged?.[1])).toMatch(/MASTER_KEY/);
      expect(await entitlement(`${customer}_user`)).toBeUndefined();
    } finally {
      errors.mockRestore();
      await first.stop();
    }
    // The operator puts the entry back (after the current one) and restarts the worker: the task goes through.
    const restarted = await startTestWorker({ masterKey: `${own},${gone}`, config: { taskQueue: first.taskQueue } });
    try {
      await until(
        'the entitlement after the key came back',
        () => entitlement(`${customer}_user`),
        (r) => r?.state === 'active',
        60_000,
      );
    } finally {
      await restarted.stop();
    }
  }, 120_000);
});
