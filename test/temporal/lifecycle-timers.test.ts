import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GRACE_PERIOD_DAYS } from '../../domain/entitlement';
import type { LifecycleEvent } from '../../domain/subscription';
import { lifecycleWorkflowId, signalLifecycleBatch } from '../../temporal/workflow-starts';
import { newTenant } from '../helpers/api';
import { testDb } from '../helpers/db';
import { startTestWorker } from '../helpers/temporal';
import { until } from '../helpers/until';

/**
 * The entity workflow's durable timer (docs/lifecycles.md): a grace period and a scheduled
 * cancellation end by themselves, with no event from the provider. The events are dated so the
 * deadline falls seconds from now; the real Temporal server fires the timer, and the history
 * shows it was a timer that woke the workflow.
 */
describe('lifecycle timers (real Temporal server, real worker)', () => {
  let w: Awaited<ReturnType<typeof startTestWorker>>;
  beforeAll(async () => {
    w = await startTestWorker();
  });
  afterAll(async () => w?.stop());

  const setup = async (name: string) => {
    const t = await newTenant(name);
    const customer = `cus_${name}_${crypto.randomBytes(4).toString('hex')}`;
    const sub = `sub_${name}_${crypto.randomBytes(4).toString('hex')}`;
    const base = { mode: 'test' as const, subscription_id: sub, customer_id: customer, app_user_id: `${name}_user` };
    const send = (events: LifecycleEvent[]) =>
      signalLifecycleBatch(
        w.client,
        w.taskQueue,
        { tenantId: t.tenant_id, provider: 'psp_a', customerKey: customer },
        events,
      );
    const ent = () =>
      testDb()('entitlements')
        .where({ tenant_id: t.tenant_id, app_user_id: `${name}_user` })
        .first();
    const timersFired = async () => {
      const { events } = await w.client.workflow
        .getHandle(lifecycleWorkflowId(t.tenant_id, 'psp_a', customer))
        .fetchHistory();
      return (events ?? []).filter((e) => e.timerFiredEventAttributes).length;
    };
    return { base, sub, send, ent, timersFired };
  };
  const at = (ms: number) => new Date(Date.now() + ms).toISOString();

  it('a grace period expires at its deadline by the workflow timer', async () => {
    const { base, send, ent, timersFired } = await setup('grace');
    // Failed 7 days less 4 seconds ago: the grace period ends 4 seconds from now.
    const failedAt = at(-GRACE_PERIOD_DAYS * 86_400_000 + 4000);
    await send([
      {
        ...base,
        id: `evt_c_${base.subscription_id}`,
        kind: 'subscription_created',
        occurred_at: at(-40 * 86_400_000),
        current_period_end: at(-GRACE_PERIOD_DAYS * 86_400_000),
      },
      { ...base, id: `evt_f_${base.subscription_id}`, kind: 'payment_failed', occurred_at: failedAt },
    ]);
    const inGrace = await until('grace written', ent, (e) => e?.state === 'grace_period');
    expect(new Date(inGrace.grace_until).getTime()).toBe(Date.parse(failedAt) + GRACE_PERIOD_DAYS * 86_400_000);
    const expired = await until('expired by the timer', ent, (e) => e?.state === 'expired', 20_000);
    expect(Date.now()).toBeGreaterThanOrEqual(new Date(expired.grace_until).getTime());
    expect(await timersFired()).toBeGreaterThanOrEqual(1);
  });

  it('a cancellation scheduled for the period end expires the entitlement then, without the provider’s final event', async () => {
    const { base, send, ent, timersFired } = await setup('sched');
    const end = at(4000);
    await send([
      {
        ...base,
        id: `evt_c_${base.subscription_id}`,
        kind: 'subscription_created',
        occurred_at: at(-86_400_000),
        current_period_end: end,
        cancel_at: null,
      },
      {
        ...base,
        id: `evt_u_${base.subscription_id}`,
        kind: 'subscription_updated',
        occurred_at: at(-1000),
        current_period_end: end,
        cancel_at: end,
      },
    ]);
    const active = await until('active until the date', ent, (e) => e?.state === 'active' && !!e.expires_at);
    expect(new Date(active.expires_at).toISOString()).toBe(end);
    await until('expired by the timer', ent, (e) => e?.state === 'expired', 20_000);
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(end));
    expect(await timersFired()).toBeGreaterThanOrEqual(1);
  });
});
