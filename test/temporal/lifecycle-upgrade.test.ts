import crypto from 'node:crypto';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
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

  it('moves a running legacy workflow to its tenant-scoped id, events intact, and ends the old one', async () => {
    const t = await newTenant('upgrade');
    const customer = `cus_legacy_${crypto.randomBytes(5).toString('hex')}`;
    const sub = `sub_legacy_${crypto.randomBytes(5).toString('hex')}`;
    const legacyId = `customer-psp_a-${customer}`;
    const legacy = await worker.client.workflow.start(customerLifecycleWorkflow, {
      taskQueue: worker.taskQueue,
      workflowId: legacyId,
      args: [{ tenantId: t.tenant_id, provider: 'psp_a', customerKey: customer }],
      typedSearchAttributes: [
        { key: TENANT_ATTR, value: t.tenant_id },
        { key: PROVIDER_ATTR, value: 'psp_a' },
        { key: KIND_ATTR, value: 'customer-lifecycle' },
      ],
    });
    const now = new Date().toISOString();
    const created: LifecycleEvent = { id: `evt_${sub}`, kind: 'subscription_created', occurred_at: now, mode: 'test', subscription_id: sub, customer_id: customer, email: 'legacy@example.com', app_user_id: 'legacy_user' };
    // The signal the dispatcher sent before the upgrade.
    await legacy.signal('events', [created]);
    const row = () => testDb()('subscriptions').where({ tenant_id: t.tenant_id, provider: 'psp_a', external_id: sub }).first();
    await until('the legacy write', row, (r) => r?.status === 'active' && r?.email === 'legacy@example.com');

    // Visibility lists a new run after a moment: run the upgrade until it has seen this one.
    const outcome = await until('the upgrade to move it', () => upgradeLegacyLifecycles(worker.client, worker.taskQueue), (o) => o.moved.some((m) => m.from === legacyId));
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
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', path.join(ROOT_DIR, 'scripts/admin.ts'), 'lifecycle:upgrade', '--json'], {
      env: { ...process.env, DATABASE_URL: inject('databaseUrl'), TEMPORAL_ADDRESS: inject('temporalAddress'), MASTER_KEY: masterKey, TEMPORAL_TASK_QUEUE: worker.taskQueue },
    });
    expect(JSON.parse(stdout).workflows).not.toContain(legacyId);
  });
});
