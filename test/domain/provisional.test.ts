import fs from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CanonicalEventKind } from '../../domain/events';
import { decideEntitlement, PREMIUM_STATES } from '../../domain/entitlement';
import {
  grantsProvisional,
  heldEndedSince,
  provisionalCounts,
  provisionalRefusal,
  provisionalStateAt,
  stopsProvisional,
  withdrawnBy,
  type HeldEntitlement,
  type ProvisionalState,
} from '../../domain/provisional';
import { deriveSubscriptions, type LifecycleEvent } from '../../domain/subscription';
import { CANONICAL_EVENT_KINDS } from '../../domain/events';
import { PROVISIONAL_AT_RECEIPT_SQL } from '../../db/provisional';

/**
 * Provisional access against the authoritative rules (docs/provisional-access.md), as a model of
 * the real parts: the receiver sees each delivery once (a redelivery of an event id changes
 * nothing), applies domain/provisional.ts with the held state it can read, and the customer's
 * workflow lags arbitrarily, applying everything received so far at random moments and
 * superseding the provisional grants of the entitlement it writes.
 */
const NOW = '2026-06-01T00:00:00.000Z';
const at = (minute: number) => new Date(Date.parse('2026-05-01T00:00:00.000Z') + minute * 60_000).toISOString();

const KINDS: CanonicalEventKind[] = [
  'subscription_created',
  'payment_succeeded',
  'renewed',
  'payment_failed',
  'refunded',
  'subscription_canceled',
  'expired',
  'subscription_updated',
];

/** One customer's events: few distinct minutes so ties are common; some name only the customer (payment intents). */
const eventArb = fc.record({
  kind: fc.constantFrom(...KINDS),
  minute: fc.integer({ min: 0, max: 6 }),
  namesSubscription: fc.boolean(),
  endedMinute: fc.option(fc.integer({ min: 0, max: 8 }), { nil: null }),
  periodEndMinute: fc.option(fc.constantFrom(3, 9, 60 * 24 * 60), { nil: null }),
});

type Step = { type: 'receive'; index: number } | { type: 'apply' };

const scenarioArb = fc.array(eventArb, { minLength: 1, maxLength: 7 }).chain((events) =>
  fc.record({
    events: fc.constant(events),
    // Every event at least once, in any order, with duplicates, and the workflow's writes anywhere between.
    steps: fc
      .array(
        fc.oneof(
          fc.record({ type: fc.constant('receive' as const), index: fc.integer({ min: 0, max: events.length - 1 }) }),
          fc.constant({ type: 'apply' as const }),
        ),
        { maxLength: 20 },
      )
      .chain((extra) =>
        fc.shuffledSubarray(
          [...events.map((_, index) => ({ type: 'receive' as const, index })), ...(extra as Step[])],
          { minLength: events.length + extra.length },
        ),
      ),
  }),
);

function lifecycleEvent(
  e: {
    kind: CanonicalEventKind;
    minute: number;
    namesSubscription: boolean;
    endedMinute: number | null;
    periodEndMinute: number | null;
  },
  i: number,
): LifecycleEvent {
  return {
    id: `evt_${i}`,
    kind: e.kind,
    occurred_at: at(e.minute),
    mode: 'test',
    // The first event always names the subscription, so every event of the customer belongs to it.
    subscription_id: e.namesSubscription || i === 0 ? 'sub_1' : null,
    customer_id: 'cus_1',
    app_user_id: 'user_1',
    sku: 'pro',
    current_period_end: e.periodEndMinute === null ? null : at(e.periodEndMinute),
    ...(e.kind === 'subscription_canceled' ? { ended_at: e.endedMinute === null ? null : at(e.endedMinute) } : {}),
  };
}

/** What the authoritative rules say, given the events received so far: the rule that decided, or null. */
function authoritativeRule(received: readonly LifecycleEvent[]) {
  const [view] = deriveSubscriptions(received);
  return view ? decideEntitlement(view, NOW) : null;
}

interface Row {
  event_at: string;
  state: ProvisionalState;
  expires_at: string;
}

describe('provisional access never contradicts the authoritative rules', () => {
  it('never premium where the events received so far say refunded, ended, or canceled and ended (random orders, duplicates, lag)', () => {
    fc.assert(
      fc.property(scenarioArb, ({ events, steps }) => {
        const all = events.map(lifecycleEvent);
        const received: LifecycleEvent[] = [];
        const seen = new Set<string>();
        let rows: Row[] = [];
        const stops: string[] = [];
        let held: HeldEntitlement | null = null;
        for (const step of steps) {
          if (step.type === 'apply') {
            // The workflow writes what it derived from everything received so far: the held state, and the
            // provisional grants of that entitlement are superseded.
            const decided = authoritativeRule(received);
            if (decided) {
              held = { state: decided.view.state, expires_at: decided.view.expires_at };
              rows = [];
            }
          } else {
            const e = all[step.index];
            if (seen.has(e.id)) continue; // a redelivery: one delivery row, no second effect
            seen.add(e.id);
            received.push(e);
            if (stopsProvisional(e.kind)) {
              rows = rows.map((r) =>
                r.state === 'provisional' && withdrawnBy(r, e.occurred_at) ? { ...r, state: 'withdrawn' } : r,
              );
              stops.push(e.occurred_at);
            } else if (
              provisionalRefusal(
                { kind: e.kind, occurred_at: e.occurred_at, app_user_id: 'user_1', product_known: true },
                held ? [held] : [],
                stops,
              ) === null
            ) {
              rows.push({ event_at: e.occurred_at, state: 'provisional', expires_at: '2026-06-01T00:15:00.000Z' });
            }
          }
          const decided = authoritativeRule(received);
          if (decided && ['refund', 'ended', 'canceled_ended'].includes(decided.rule))
            expect(rows.filter((r) => provisionalCounts(r, NOW))).toEqual([]);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('grants for the kinds that move a subscription to active, stops for endings, nothing else', () => {
    expect(CANONICAL_EVENT_KINDS.filter(grantsProvisional)).toEqual([
      'subscription_created',
      'payment_succeeded',
      'renewed',
    ]);
    expect(CANONICAL_EVENT_KINDS.filter(stopsProvisional)).toEqual(['subscription_canceled', 'refunded', 'expired']);
  });

  it('a held ending at or after the event refuses it; an earlier one does not (a new purchase after a refund)', () => {
    const refunded: HeldEntitlement = { state: 'revoked', expires_at: at(5) };
    expect(heldEndedSince(refunded, at(4))).toBe(true);
    expect(heldEndedSince(refunded, at(5))).toBe(true);
    expect(heldEndedSince(refunded, at(6))).toBe(false);
    expect(heldEndedSince({ state: 'active', expires_at: at(9) }, at(4))).toBe(false);
    const e = { kind: 'payment_succeeded' as const, occurred_at: at(4), app_user_id: 'u', product_known: true };
    expect(provisionalRefusal(e, [refunded], [])).toBe('ended_by_held_state');
    expect(provisionalRefusal(e, [], [at(4)])).toBe('stopped');
    expect(provisionalRefusal(e, [], [at(3)])).toBeNull();
    expect(provisionalRefusal({ ...e, app_user_id: null }, [], [])).toBe('unknown_user_or_product');
    expect(provisionalRefusal({ ...e, kind: 'payment_failed' }, [], [])).toBe('not_a_grant');
  });

  it('an expiry passed without confirmation reads unconfirmed and stops counting', () => {
    const row = { state: 'provisional' as const, expires_at: at(10) };
    expect(provisionalStateAt(row, at(9))).toBe('provisional');
    expect(provisionalCounts(row, at(9))).toBe(true);
    expect(provisionalStateAt(row, at(10))).toBe('unconfirmed');
    expect(provisionalCounts(row, at(10))).toBe(false);
    expect(provisionalCounts({ state: 'withdrawn', expires_at: at(10) }, at(9))).toBe(false);
  });

  it('the receiver’s SQL says the same rules: premium states, one call on first delivery', () => {
    const text = fs.readFileSync(new URL('../../db/migrations/001_baseline.ts', import.meta.url), 'utf8');
    const fn = text.slice(text.indexOf('CREATE FUNCTION public.record_provisional_access('));
    const body = fn.slice(0, fn.indexOf('$$;'));
    expect(body).toContain(`e.state not in (${PREMIUM_STATES.map((s) => `'${s}'`).join(', ')})`);
    expect(body).toContain('a.event_at >= p_event_at'); // a stop at or after the event refuses it
    expect(body).toContain('e.expires_at >= p_event_at'); // heldEndedSince
    expect(body).toContain('event_at <= p_event_at'); // withdrawnBy
    // The receiver wakes the premium waiters after its commit, never from inside this function.
    expect(body).not.toContain('pg_notify');
    expect(PROVISIONAL_AT_RECEIPT_SQL).toContain('where i.fresh'); // the first delivery only (db/webhook-deliveries.ts)
  });
});
