import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant } from '../../db/tenants';
import { startTrialTimer, trialWorkflowId } from '../../temporal/workflow-starts';
import { TENANT_ATTR } from '../../temporal/search-attributes';
import { testDb } from '../helpers/db';
import { startTestWorker } from '../helpers/temporal';

describe('subscription trial workflow (real Temporal server, real worker)', () => {
  const db = testDb();
  let w: Awaited<ReturnType<typeof startTestWorker>>;
  beforeAll(async () => {
    w = await startTestWorker();
  });
  afterAll(async () => {
    await w?.stop();
  });

  it('waits on a durable timer until the trial ends, then records trialEndedAt once', async () => {
    const t = await createTenant(db, { name: 'trial-wf' });
    const [sub] = await db('subscriptions')
      .insert({ tenant_id: t.tenant_id, provider: 'psp_a', mode: 'test', status: 'trialing', external_id: `sub_${Date.now()}`, trial_started_at: new Date() })
      .returning('id');
    const trialEndsAt = new Date(Date.now() + 1500).toISOString();
    const started = Date.now();
    const handle = await startTrialTimer(w.client, w.taskQueue, { tenantId: t.tenant_id, subscriptionId: sub.id, trialEndsAt });
    expect(handle.workflowId).toBe(trialWorkflowId(sub.id));

    const result = await handle.result();
    expect(Date.now() - started).toBeGreaterThanOrEqual(1400);
    expect(result.trialEndedAt).toBe(trialEndsAt);
    const row = await db('subscriptions').where({ id: sub.id }).first();
    expect(new Date(row.trial_ended_at).toISOString()).toBe(trialEndsAt);
    expect(row.trial_started_at).not.toBeNull();

    const desc = await handle.describe();
    expect(desc.typedSearchAttributes.get(TENANT_ATTR)).toBe(t.tenant_id);
  });
});
