import { describe, expect, it } from 'vitest';
import { ENTITLEMENT_STATES, entitlementFor, type EntitlementState } from '../../domain/entitlement';
import { registrationRefusal, storeWritePlan, type StorePurchaseRead } from '../../domain/store-purchase';
import { applyEvent, deriveSubscriptions, type LifecycleEvent } from '../../domain/subscription';

/** The rule tables docs/lifecycles.md prints, row by row. */

describe('Play supersession (linkedPurchaseToken): one entitlement, never zero, never two', () => {
  const grants = (s: EntitlementState) => s === 'active' || s === 'grace_period';
  for (const state of [null, ...ENTITLEMENT_STATES] as const) {
    for (const predecessor of [false, true]) {
      for (const superseded of [null, 'newer-key']) {
        const expected =
          state === null || superseded
            ? { entitlement: false, supersede: false }
            : { entitlement: true, supersede: predecessor && grants(state) };
        it(`state ${state} · predecessor ${predecessor} · superseded ${superseded ?? 'no'} → ${JSON.stringify(expected)}`, () => {
          expect(storeWritePlan(state, predecessor, superseded)).toEqual(expected);
        });
      }
    }
  }
  it('a replacement that grants nothing yet leaves its predecessor granting (never zero)', () => {
    expect(storeWritePlan('expired', true, null).supersede).toBe(false);
  });
});

describe('Family Sharing at registration', () => {
  const read = (over: Partial<StorePurchaseRead>): StorePurchaseRead => ({
    provider: 'store_ios',
    purchase_key: '2000',
    store_product_id: 'premium_monthly',
    store_app_user: 'purchaser-token',
    is_sandbox: true,
    state: 'active',
    expires_at: null,
    acknowledged: true,
    read_at: '2026-01-01T00:00:00.000Z',
    ...over,
  });
  it.each([
    ['the purchaser registers their own purchase', read({ ownership: 'purchased' }), 'purchaser-token', null],
    [
      'someone else registers a purchased transaction',
      read({ ownership: 'purchased' }),
      'member-token',
      'purchase_token_reused',
    ],
    ['a family member registers the shared transaction', read({ ownership: 'family_shared' }), 'member-token', null],
    [
      'a shared transaction naming no buyer',
      read({ ownership: 'family_shared', store_app_user: null }),
      'member-token',
      null,
    ],
  ] as const)('%s → %s', (_n, r, caller, code) => {
    expect(registrationRefusal(r, 'test', caller)?.error ?? null).toBe(code);
  });
});

describe('web cancellations: at the period end vs at once', () => {
  const T = (d: number) => new Date(Date.parse('2026-03-01T00:00:00.000Z') + d * 86_400_000).toISOString();
  let n = 0;
  const ev = (kind: LifecycleEvent['kind'], at: string, over: Partial<LifecycleEvent> = {}): LifecycleEvent => ({
    id: `e${++n}`,
    kind,
    occurred_at: at,
    mode: 'test',
    subscription_id: 'sub',
    customer_id: 'cus',
    ...over,
  });
  const created = () => ev('subscription_created', T(0), { current_period_end: T(30) });
  const grant = (events: LifecycleEvent[], now: string) => entitlementFor(deriveSubscriptions(events)[0], now);

  it('an immediate cancellation (ended_at now) ends access at once, though the period runs on', () => {
    const events = [created(), ev('subscription_canceled', T(10), { ended_at: T(10), current_period_end: T(30) })];
    expect(grant(events, T(10.5))).toMatchObject({ state: 'expired', expires_at: T(10) });
  });

  it('a cancellation scheduled for the period end keeps access to that date, with a timer, then expires', () => {
    const events = [created(), ev('subscription_updated', T(10), { cancel_at: T(30), current_period_end: T(30) })];
    expect(deriveSubscriptions(events)[0].status).toBe('active');
    expect(grant(events, T(20))).toEqual({
      state: 'active',
      expires_at: T(30),
      grace_until: null,
      next_change_at: T(30),
    });
    expect(grant(events, T(31))).toMatchObject({ state: 'expired', next_change_at: null });
  });

  it('a scheduled cancellation lifted by a later event is gone; one set after a lift stands', () => {
    const scheduled = ev('subscription_updated', T(10), { cancel_at: T(30) });
    const lifted = ev('subscription_updated', T(12), { cancel_at: null });
    expect(grant([created(), scheduled, lifted], T(31))).toMatchObject({ state: 'active', next_change_at: null });
    // Order of delivery does not matter: the event's own time decides.
    let state = { events: [] as LifecycleEvent[] };
    for (const e of [lifted, created(), scheduled]) state = applyEvent(state, e).state;
    expect(grant(state.events, T(31)).state).toBe('active');
  });

  it('the provider’s final event at the period end (ended_at = period end) expires it then', () => {
    const events = [
      created(),
      ev('subscription_updated', T(10), { cancel_at: T(30) }),
      ev('subscription_canceled', T(30), { ended_at: T(30) }),
    ];
    expect(grant(events, T(30.1))).toMatchObject({ state: 'expired', expires_at: T(30) });
  });

  it('a cancellation event recorded before ended_at was read keeps its old meaning: access to the period end', () => {
    const events = [created(), ev('subscription_canceled', T(10), { current_period_end: T(30) })];
    expect(grant(events, T(20))).toMatchObject({ state: 'active', expires_at: T(30), next_change_at: T(30) });
    expect(deriveSubscriptions(events)[0]).not.toHaveProperty('ended_at');
  });

  it('payment failed → grace with a deadline (the durable timer), recovery on the next success', () => {
    const failed = [created(), ev('payment_failed', T(30))];
    expect(grant(failed, T(31))).toMatchObject({ state: 'grace_period', next_change_at: T(37) });
    expect(grant(failed, T(37.01)).state).toBe('expired');
    expect(grant([...failed, ev('payment_succeeded', T(32), { current_period_end: T(60) })], T(40))).toMatchObject({
      state: 'active',
      next_change_at: null,
    });
  });
});
