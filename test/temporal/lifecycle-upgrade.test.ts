import crypto from 'node:crypto';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { LifecycleEvent } from '../../domain/subscription';
import { ROOT_DIR } from '../../runtime/config';
import { upgradeLegacyLifecycles } from '../../temporal/lifecycle-upgrade';
import { KIND_ATTR, PROVIDER_ATTR, TENANT_ATTR } from '../../temporal/search-attributes';
import { lifecycleWorkflowId, signalLifecycleBatch } from '../../temporal/workflow-starts';
import { customerLifecycleWorkflow, lifecycleEventsQuery } from '../../workflows/customer-lifecycle';
import { newTenant } from '../helpers/api';
import { testDb } from '../helpers/db';
import { startTestWorker } from '../helpers/temporal';
import { until } from '../helpers/until';

/**
 * Upgrading from workflow ids without the tenant: a customer workflow started under the old id
 * (holding an event with the buyer's email, as they did) hands its events to the new workflow and
 * ends; a refund that names only the customer then lands on the right subscription, and the
 * subscription keeps the email it had.
 */
describe('lifecycle:upgrade', () => {
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  const masterKey = `k1:${crypto.randomBytes(32).toString('base64')}`;
  beforeAll(async () => {
    worker = await startTestWorker({ masterKey });
  });
  afterAll(async () => worker?.stop());

  /** The delivery row the receiver stored for an event (every event a customer workflow holds came through one). */
  const delivered = (tenantId: string, eventId: string) =>
    testDb()('webhook_deliveries').insert({ tenant_id: tenantId, provider: 'psp_a', event_id: eventId, event_type: 'customer.subscription.created', status: 'processed', payload: {} });
  const admin = (...args: string[]) =>
    promisify(execFile)(process.execPath, ['--import', 'tsx', path.join(ROOT_DIR, 'scripts/admin.ts'), ...args], {
      env: { ...process.env, DATABASE_URL: inject('databaseUrl'), TEMPORAL_ADDRESS: inject('temporalAddress'), MASTER_KEY: masterKey, TEMPORAL_TASK_QUEUE: worker.taskQueue },
    });
  /** A workflow as the release before tenant-scoped ids started it: `customer-<provider>-<customer>`, under its first tenant. */
  const startLegacy = (tenantId: string, customer: string) =>
    worker.client.workflow.start(customerLifecycleWorkflow, {
      taskQueue: worker.taskQueue,
      workflowId: `customer-psp_a-${customer}`,
      args: [{ tenantId, provider: 'psp_a', customerKey: customer }],
      typedSearchAttributes: [
        { key: TENANT_ATTR, value: tenantId },
        { key: PROVIDER_ATTR, value: 'psp_a' },
        { key: KIND_ATTR, value: 'customer-lifecycle' },
      ],
    });
  const exists = (workflowId: string) =>
    worker.client.workflow.getHandle(workflowId).describe().then(
      () => true,
      (e) => (e instanceof WorkflowNotFoundError ? false : Promise.reject(e)),
    );

  it('moves a running legacy workflow to its tenant-scoped id, events intact, and ends the old one', async () => {
    const t = await newTenant('upgrade');
    const customer = `cus_legacy_${crypto.randomBytes(5).toString('hex')}`;
    const sub = `sub_legacy_${crypto.randomBytes(5).toString('hex')}`;
    const legacyId = `customer-psp_a-${customer}`;
    const legacy = await startLegacy(t.tenant_id, customer);
    const now = new Date().toISOString();
    const created: LifecycleEvent = { id: `evt_${sub}`, kind: 'subscription_created', occurred_at: now, mode: 'test', subscription_id: sub, customer_id: customer, email: 'legacy@example.com', app_user_id: 'legacy_user' };
    await delivered(t.tenant_id, created.id);
    // The signal the dispatcher sent before the upgrade.
    await legacy.signal('events', [created]);
    const row = () => testDb()('subscriptions').where({ tenant_id: t.tenant_id, provider: 'psp_a', external_id: sub }).first();
    await until('the legacy write', row, (r) => r?.status === 'active' && r?.email === 'legacy@example.com');

    // Visibility lists a new run after a moment: run the upgrade until it has seen this one.
    const outcome = await until('the upgrade to move it', () => upgradeLegacyLifecycles(worker.client, testDb(), worker.taskQueue), (o) => o.moved.some((m) => m.from === legacyId));
    const to = lifecycleWorkflowId(t.tenant_id, 'psp_a', customer);
    expect(outcome.moved.find((m) => m.from === legacyId)).toEqual({ from: legacyId, to, events: 1 });
    expect((await legacy.describe()).status.name).toBe('TERMINATED');
    const moved = worker.client.workflow.getHandle(to);
    expect(await moved.query(lifecycleEventsQuery)).toEqual([{ ...Object.fromEntries(Object.entries(created).filter(([k]) => k !== 'email')), has_email: true }]);

    // A refund naming only the customer finds the subscription the old workflow knew.
    await signalLifecycleBatch(worker.client, worker.taskQueue, { tenantId: t.tenant_id, provider: 'psp_a', customerKey: customer }, [
      { id: `evt_refund_${sub}`, kind: 'refunded', occurred_at: new Date(Date.now() + 1000).toISOString(), mode: 'test', subscription_id: null, customer_id: customer },
    ]);
    const after = await until('the refund applied', row, (r) => r?.status === 'refunded');
    expect(after.email).toBe('legacy@example.com');
    const ent = await testDb()('entitlements').where({ tenant_id: t.tenant_id, app_user_id: 'legacy_user' }).first();
    expect(ent.state).toBe('revoked');

    // The operator's command runs the same step (nothing left to move now) and says so.
    const { stdout } = await admin('lifecycle:upgrade', '--json');
    expect(JSON.parse(stdout).workflows).not.toContain(legacyId);
  });

  it('a legacy workflow holding events of two tenants (the old id’s flaw) is left running and reported, nothing moved; so is one with an event no delivery row names', async () => {
    const [a, b] = [await newTenant('upgrade-a'), await newTenant('upgrade-b')];
    // Both tenants have a psp_a customer with this id: under the old id they shared one workflow, started by A's event.
    const customer = `cus_shared_${crypto.randomBytes(5).toString('hex')}`;
    const mixedId = `customer-psp_a-${customer}`;
    const mixed = await startLegacy(a.tenant_id, customer);
    const event = (id: string, appUser: string): LifecycleEvent => ({
      id, kind: 'subscription_created', occurred_at: new Date().toISOString(), mode: 'test', subscription_id: `sub_${id}`, customer_id: customer, app_user_id: appUser,
    });
    const ofA = event(`evt_a_${customer}`, 'user_of_a');
    const ofB = event(`evt_b_${customer}`, 'user_of_b');
    await delivered(a.tenant_id, ofA.id);
    await delivered(b.tenant_id, ofB.id);
    await mixed.signal('events', [ofA, ofB]);
    await until('both events held', () => mixed.query(lifecycleEventsQuery), (es) => es.length === 2);

    // One more, of A alone, but with an event nobody's delivery row names: it cannot be checked.
    const lone = `cus_unchecked_${crypto.randomBytes(5).toString('hex')}`;
    const unchecked = await startLegacy(a.tenant_id, lone);
    const known = { ...event(`evt_known_${lone}`, 'user_lone'), customer_id: lone };
    const unknown = { ...event(`evt_unknown_${lone}`, 'user_lone'), customer_id: lone };
    await delivered(a.tenant_id, known.id);
    await unchecked.signal('events', [known, unknown]);
    await until('both events held', () => unchecked.query(lifecycleEventsQuery), (es) => es.length === 2);

    try {
      const outcome = await until('the upgrade to see both', () => upgradeLegacyLifecycles(worker.client, testDb(), worker.taskQueue), (o) =>
        [mixedId, unchecked.workflowId].every((id) => o.skipped.some((s) => s.workflow_id === id)));
      expect(outcome.skipped.find((s) => s.workflow_id === mixedId)).toEqual({
        workflow_id: mixedId,
        reason: 'mixed: another tenant received 1 of its 2 events; left running, nothing moved',
        events_by_tenant: { [a.tenant_id]: [ofA.id], [b.tenant_id]: [ofB.id] },
      });
      expect(outcome.skipped.find((s) => s.workflow_id === unchecked.workflowId)).toEqual({
        workflow_id: unchecked.workflowId,
        reason: 'mixed: 1 of its 2 events has no delivery row to check; left running, nothing moved',
        events_by_tenant: { [a.tenant_id]: [known.id] },
        events_without_delivery: [unknown.id],
      });
      expect(outcome.moved.map((m) => m.from)).not.toContain(mixedId);
      expect(outcome.moved.map((m) => m.from)).not.toContain(unchecked.workflowId);
      // Untouched: still running, and no tenant-scoped workflow got B's event (or anything) from it.
      expect((await mixed.describe()).status.name).toBe('RUNNING');
      expect((await unchecked.describe()).status.name).toBe('RUNNING');
      for (const t of [a, b]) expect(await exists(lifecycleWorkflowId(t.tenant_id, 'psp_a', customer))).toBe(false);
      expect(await exists(lifecycleWorkflowId(a.tenant_id, 'psp_a', lone))).toBe(false);

      // The operator's command reports them whole.
      const out = JSON.parse((await admin('lifecycle:upgrade', '--json')).stdout);
      const reported = JSON.parse(out.skipped_workflows) as { workflow_id: string; events_by_tenant?: Record<string, string[]> }[];
      expect(reported.find((s) => s.workflow_id === mixedId)?.events_by_tenant).toEqual({ [a.tenant_id]: [ofA.id], [b.tenant_id]: [ofB.id] });
      expect(JSON.parse(out.workflows)).not.toContain(lifecycleWorkflowId(a.tenant_id, 'psp_a', customer));
    } finally {
      // Leave no running legacy workflow for the next upgrade run to meet.
      await mixed.terminate('test over');
      await unchecked.terminate('test over');
    }
  });
});
