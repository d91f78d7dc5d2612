import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CANONICAL_EVENT_KINDS, type CanonicalEventKind } from '../../domain/events';
import {
  applyEvent,
  deriveSubscriptions,
  statusMove,
  SUBSCRIPTION_STATUSES,
  type LifecycleEvent,
  type LifecycleState,
  type SubscriptionStatus,
} from '../../domain/subscription';
import { cacheTtlSeconds, entitlementFor, GRACE_PERIOD_DAYS, isPremiumState } from '../../domain/entitlement';

let n = 0;
const ev = (kind: CanonicalEventKind, at: string, over: Partial<LifecycleEvent> = {}): LifecycleEvent => ({
  id: `evt_${++n}`,
  kind,
  occurred_at: at,
  mode: 'test',
  subscription_id: 'sub_1',
  customer_id: 'cus_1',
  ...over,
});
const T0 = '2026-01-01T00:00:00.000Z';
const T1 = '2026-01-02T00:00:00.000Z';
const view = (events: LifecycleEvent[]) => deriveSubscriptions(events)[0];

/** Which status each kind moves to, from every starting status (the status before does not matter: the latest event decides). */
const EXPECTED: Record<CanonicalEventKind, SubscriptionStatus | null> = {
  subscription_created: 'active',
  subscription_updated: null,
  subscription_canceled: 'canceled',
  payment_succeeded: 'active',
  payment_failed: 'past_due',
  refunded: 'refunded',
  renewed: 'active',
  expired: 'expired',
  grace_period: 'past_due',
  test: null,
  other: null,
};
const REACH: Record<SubscriptionStatus, CanonicalEventKind> = {
  trialing: 'subscription_created',
  active: 'payment_succeeded',
  past_due: 'payment_failed',
  canceled: 'subscription_canceled',
  refunded: 'refunded',
  expired: 'expired',
};

describe('subscription status: every (state × event) pair', () => {
  for (const from of SUBSCRIPTION_STATUSES) {
    for (const kind of CANONICAL_EVENT_KINDS) {
      it(`${from} + ${kind} → ${EXPECTED[kind] ?? from}`, () => {
        const start = ev(REACH[from], T0, from === 'trialing' ? { trial_end: '2026-01-10T00:00:00.000Z' } : {});
        const s0: LifecycleState = { events: [start] };
        expect(view(s0.events).status).toBe(from);
        const { state, effects } = applyEvent(s0, ev(kind, T1));
        const expected = EXPECTED[kind] === 'active' && from === 'trialing' ? 'trialing' : (EXPECTED[kind] ?? from);
        expect(view(state.events).status).toBe(expected);
        expect(effects).toEqual([{ type: 'write', subscriptions: deriveSubscriptions(state.events) }]);
        expect(statusMove(kind)).toBe(EXPECTED[kind]);
      });
    }
  }

  it('a seen event id changes nothing (a redelivery)', () => {
    const e = ev('payment_succeeded', T0);
    const s = applyEvent({ events: [] }, e).state;
    expect(applyEvent(s, e)).toEqual({ state: s, effects: [{ type: 'ignore_duplicate', event_id: e.id }] });
  });

  it('the checkout trio at one instant is active; a refund stamped the same second wins over a payment', () => {
    const trio = [
      ev('payment_succeeded', T0, { subscription_id: null }),
      ev('subscription_created', T0),
      ev('payment_succeeded', T0),
    ];
    expect(view(trio).status).toBe('active');
    expect(view([...trio, ev('refunded', T0, { subscription_id: null })]).status).toBe('refunded');
  });

  it('trial timestamps persist through conversion and renewal', () => {
    const trial = ev('subscription_created', T0, { trial_start: T0, trial_end: '2026-01-15T00:00:00.000Z' });
    expect(view([trial])).toMatchObject({
      status: 'trialing',
      trial_started_at: T0,
      trial_ended_at: '2026-01-15T00:00:00.000Z',
    });
    const renewed = [
      trial,
      ev('payment_succeeded', '2026-01-15T00:00:01.000Z'),
      ev('renewed', '2026-02-15T00:00:00.000Z'),
    ];
    expect(view(renewed)).toMatchObject({
      status: 'active',
      trial_started_at: T0,
      trial_ended_at: '2026-01-15T00:00:00.000Z',
    });
  });

  it('events naming only the customer join the customer’s latest subscription', () => {
    const subs = deriveSubscriptions([
      ev('subscription_created', T0, { subscription_id: 'sub_old' }),
      ev('subscription_created', T1, { subscription_id: 'sub_new' }),
      ev('refunded', '2026-01-03T00:00:00.000Z', { subscription_id: null }),
    ]);
    expect(Object.fromEntries(subs.map((s) => [s.external_id, s.status]))).toEqual({
      sub_old: 'active',
      sub_new: 'refunded',
    });
  });
});

describe('entitlement: differs from the subscription exactly in grace periods and refunds', () => {
  const now = '2026-01-05T00:00:00.000Z';
  const sub = (status: SubscriptionStatus, over = {}) => ({ ...view([ev(REACH[status], T0)]), status, ...over });
  it.each<[SubscriptionStatus, object, string, boolean]>([
    ['active', {}, 'active', true],
    ['trialing', {}, 'active', true],
    ['past_due', {}, 'grace_period', true],
    ['past_due', { status_since: '2025-12-01T00:00:00.000Z' }, 'expired', false],
    ['canceled', { current_period_end: '2026-02-01T00:00:00.000Z' }, 'active', true],
    ['canceled', { current_period_end: '2026-01-02T00:00:00.000Z' }, 'expired', false],
    ['refunded', {}, 'revoked', false],
    ['expired', {}, 'expired', false],
  ])('%s %j → %s', (status, over, state, premium) => {
    const e = entitlementFor(sub(status, over), now);
    expect(e.state).toBe(state);
    expect(isPremiumState(e.state)).toBe(premium);
  });

  it('a grace period carries its deadline as the next change (the workflow’s durable timer)', () => {
    const e = entitlementFor(sub('past_due'), now);
    expect(e.grace_until).toBe(new Date(Date.parse(T0) + GRACE_PERIOD_DAYS * 86_400_000).toISOString());
    expect(e.next_change_at).toBe(e.grace_until);
  });

  it('the SDK cache lives a week, an hour while a trial runs', () => {
    expect(cacheTtlSeconds([{ status: 'active' }])).toBe(604800);
    expect(cacheTtlSeconds([{ status: 'active' }, { status: 'trialing' }])).toBe(3600);
  });
});

describe('order and duplicates do not matter', () => {
  /** A realistic sequence: checkout trio, renewals, a failed payment and recovery, then an ending. */
  const story = (end: CanonicalEventKind): LifecycleEvent[] => {
    const t = (d: number) => new Date(Date.parse(T0) + d * 86_400_000).toISOString();
    return [
      ev('payment_succeeded', t(0), { subscription_id: null, has_email: true }),
      ev('subscription_created', t(0), { trial_start: t(0), trial_end: t(7), app_user_id: 'u1' }),
      ev('payment_succeeded', t(0)),
      ev('subscription_updated', t(7), { current_period_end: t(37) }),
      ev('payment_succeeded', t(7)),
      ev('payment_failed', t(37)),
      ev('payment_succeeded', t(39), { current_period_end: t(67) }),
      ev(end, t(50), end === 'refunded' ? { subscription_id: null } : {}),
    ];
  };

  it('any permutation, with any event repeated, converges to the same subscription', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<CanonicalEventKind>(
          'refunded',
          'subscription_canceled',
          'expired',
          'payment_failed',
          'renewed',
        ),
        fc.array(fc.nat(), { minLength: 8, maxLength: 8 }),
        fc.array(fc.nat({ max: 7 }), { maxLength: 6 }),
        (end, keys, dupes) => {
          const events = story(end);
          const expected = deriveSubscriptions(events);
          const shuffled = events
            .map((e, i) => ({ e, k: keys[i] }))
            .sort((a, b) => a.k - b.k)
            .map((x) => x.e);
          const delivered = [...shuffled, ...dupes.map((i) => events[i])];
          let state: LifecycleState = { events: [] };
          for (const e of delivered) state = applyEvent(state, e).state;
          expect(deriveSubscriptions(state.events)).toEqual(expected);
          return true;
        },
      ),
      { numRuns: 300 },
    );
  });
});
