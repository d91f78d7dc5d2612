import { describe, expect, it } from 'vitest';
import { entitlementFor } from '../../domain/entitlement';
import { snapshotEvents, type SubscriptionSnapshot } from '../../domain/provider-snapshot';
import { applyEvent, deriveSubscriptions, type LifecycleEvent, type LifecycleState } from '../../domain/subscription';

const STARTED = '2026-01-01T00:00:00.000Z';
const READ = '2026-01-10T00:00:00.000Z';
const LATER = '2026-01-20T00:00:00.000Z';
const PERIOD_END = '2026-02-01T00:00:00.000Z';

const snap = (over: Partial<SubscriptionSnapshot> = {}): SubscriptionSnapshot => ({
  provider: 'psp_a',
  subscription_id: 'sub_1',
  customer_id: 'cus_1',
  app_user_id: 'user_1',
  sku: 'pro_monthly',
  mode: 'test',
  status: 'active',
  started_at: STARTED,
  current_period_end: PERIOD_END,
  ...over,
});

/** What the customer workflow would hold and grant after these events, at `now`. */
function outcome(events: LifecycleEvent[], now = READ) {
  const [sub] = deriveSubscriptions(events);
  return { status: sub.status, entitlement: entitlementFor(sub, now).state, sub };
}

describe('snapshotEvents: a provider snapshot → lifecycle events', () => {
  it('active: an active subscription, premium, for the app user and sku the provider holds', () => {
    const events = snapshotEvents(snap(), READ, 'import');
    const o = outcome(events);
    expect([o.status, o.entitlement]).toEqual(['active', 'active']);
    expect([o.sub.app_user_id, o.sub.sku, o.sub.customer_id, o.sub.current_period_end]).toEqual([
      'user_1',
      'pro_monthly',
      'cus_1',
      PERIOD_END,
    ]);
    expect(events.every((e) => e.source === 'import')).toBe(true);
  });

  it('trialing: still inside its trial', () => {
    const o = outcome(
      snapshotEvents(snap({ status: 'trialing', trial_start: STARTED, trial_end: LATER }), READ, 'import'),
    );
    expect([o.status, o.entitlement, o.sub.trial_ended_at]).toEqual(['trialing', 'active', LATER]);
  });

  it('canceled at period end: access to the scheduled date, then expired', () => {
    const events = snapshotEvents(snap({ cancel_at: PERIOD_END }), READ, 'import');
    const [sub] = deriveSubscriptions(events);
    expect(entitlementFor(sub, READ)).toMatchObject({ state: 'active', next_change_at: PERIOD_END });
    expect(entitlementFor(sub, '2026-03-01T00:00:00.000Z').state).toBe('expired');
  });

  it('ended: a cancellation that took effect grants nothing', () => {
    const o = outcome(
      snapshotEvents(
        snap({ status: 'canceled', ended_at: '2026-01-05T00:00:00.000Z', status_since: '2026-01-05T00:00:00.000Z' }),
        READ,
        'import',
      ),
    );
    expect([o.status, o.entitlement]).toEqual(['canceled', 'expired']);
  });

  it('refunded: revoked', () => {
    const o = outcome(snapshotEvents(snap({ status: 'refunded' }), READ, 'reconciliation'));
    expect([o.status, o.entitlement]).toEqual(['refunded', 'revoked']);
  });

  it('grace: a failed renewal the provider retries keeps access for the grace period', () => {
    const o = outcome(snapshotEvents(snap({ status: 'past_due', status_since: READ }), READ, 'import'));
    expect([o.status, o.entitlement]).toEqual(['past_due', 'grace_period']);
  });

  it('the same state read twice adds nothing (ids come from the facts, not the read time)', () => {
    let state: LifecycleState = { events: [] };
    for (const e of snapshotEvents(snap(), READ, 'import')) state = applyEvent(state, e).state;
    const again = snapshotEvents(snap(), LATER, 'import').map((e) => applyEvent(state, e).effects[0].type);
    expect(again).toEqual(['ignore_duplicate', 'ignore_duplicate']);
  });

  it('a changed state corrects what a lost webhook left: active, then refunded at the provider', () => {
    const events = [
      ...snapshotEvents(snap(), READ, 'import'),
      ...snapshotEvents(snap({ status: 'refunded', status_since: LATER }), LATER, 'reconciliation'),
    ];
    expect(outcome(events, LATER).entitlement).toBe('revoked');
  });

  it('a schedule a lost webhook left standing is lifted by a live snapshot that names none', () => {
    const scheduled: LifecycleEvent = {
      id: 'evt_sched',
      kind: 'subscription_updated',
      occurred_at: '2026-01-05T00:00:00.000Z',
      mode: 'test',
      subscription_id: 'sub_1',
      customer_id: 'cus_1',
      cancel_at: '2026-01-15T00:00:00.000Z',
    };
    const events = [scheduled, ...snapshotEvents(snap(), READ, 'reconciliation')];
    expect(outcome(events, LATER).entitlement).toBe('active');
  });

  it('a reconciliation outranks the earlier read it corrects, even when the provider stamps the change earlier', () => {
    const firstRead = '2026-01-05T00:00:00.700Z';
    const canceledAt = '2026-01-05T00:00:00.000Z'; // whole seconds: before the first read
    const events = [
      ...snapshotEvents(snap(), firstRead, 'reconciliation'),
      ...snapshotEvents(
        snap({ status: 'canceled', ended_at: canceledAt, status_since: canceledAt }),
        '2026-01-05T00:00:01.500Z',
        'reconciliation',
      ),
    ];
    expect(outcome(events, LATER).status).toBe('canceled');
  });
});
