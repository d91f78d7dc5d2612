import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LifecycleEvent } from '../../domain/subscription';
import { signalLifecycleBatch } from '../../temporal/workflow-starts';
import { newTenant } from '../helpers/api';
import { testDb } from '../helpers/db';
import { startTestWorker } from '../helpers/temporal';
import { until } from '../helpers/until';

/**
 * The spec's trial timestamps, end to end through the customer workflow and its write: the record
 * keeps trialStartedAt and trialEndedAt once the trial has ended and after it converted and renewed.
 * (This replaced a separate trial timer workflow that wrote trialEndedAt on its own.)
 */
describe('trial timestamps on the subscription record (real Temporal server, real worker)', () => {
  let w: Awaited<ReturnType<typeof startTestWorker>>;
  beforeAll(async () => {
    w = await startTestWorker();
  });
  afterAll(async () => w?.stop());

  it('keeps trial_started_at and trial_ended_at after the trial ends and after conversion', async () => {
    const t = await newTenant('trial');
    const customer = `cus_trial_${crypto.randomBytes(4).toString('hex')}`;
    const sub = `sub_trial_${crypto.randomBytes(4).toString('hex')}`;
    const at = (s: number) => new Date(Date.now() + s * 1000).toISOString();
    const trialStart = at(-10);
    const trialEnd = at(-2); // already over: the conversion below comes after it
    const base = { mode: 'test' as const, subscription_id: sub, customer_id: customer, app_user_id: 'trial_user' };
    const send = (events: LifecycleEvent[]) =>
      signalLifecycleBatch(
        w.client,
        w.taskQueue,
        { tenantId: t.tenant_id, provider: 'psp_a', customerKey: customer },
        events,
      );
    const row = () =>
      testDb()('subscriptions').where({ tenant_id: t.tenant_id, provider: 'psp_a', external_id: sub }).first();

    await send([
      {
        ...base,
        id: `evt_created_${sub}`,
        kind: 'subscription_created',
        occurred_at: trialStart,
        trial_start: trialStart,
        trial_end: trialEnd,
      },
    ]);
    const trialing = await until('the trial written', row, (r) => !!r?.trial_ended_at);
    expect(new Date(trialing.trial_started_at).toISOString()).toBe(trialStart);
    expect(new Date(trialing.trial_ended_at).toISOString()).toBe(trialEnd);

    // Converted when the trial ended, then renewed: events that carry no trial fields.
    await send([
      {
        ...base,
        id: `evt_paid_${sub}`,
        kind: 'payment_succeeded',
        occurred_at: at(-1),
        current_period_end: at(86_400),
      },
      { ...base, id: `evt_renewed_${sub}`, kind: 'renewed', occurred_at: at(0), current_period_end: at(2 * 86_400) },
    ]);
    const converted = await until(
      'the conversion written',
      row,
      (r) => r?.status === 'active' && new Date(r.current_period_end).getTime() > Date.now() + 86_400_000,
    );
    expect(new Date(converted.trial_started_at).toISOString()).toBe(trialStart);
    expect(new Date(converted.trial_ended_at).toISOString()).toBe(trialEnd);
  });
});
