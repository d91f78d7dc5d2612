import { describe, expect, it } from 'vitest';
import { MAX_HOLD_MS, SETTLE_MS, settleWaitMs, type Handover } from '../../api/webhooks/handover';

const lifecycle = (id: string): Handover => ({
  kind: 'lifecycle',
  tenantId: '00000000-0000-4000-8000-000000000001',
  provider: 'psp_a',
  customerKey: 'cus_1',
  event: {
    id,
    kind: 'payment_succeeded',
    occurred_at: '2026-11-26T00:00:00Z',
    mode: 'test',
    subscription_id: null,
    customer_id: 'cus_1',
  },
});
const rows = (...ages: number[]) => ages.map((age_ms, i) => ({ handover: lifecycle(`evt_${i}`), age_ms }));

/** When the dispatcher hands a customer's rows over: once they settled, and never later than the hold's bound. */
describe('settleWaitMs', () => {
  it('holds a customer whose newest event is younger than the settling time, until it is that old', () => {
    expect(settleWaitMs(rows(2))).toBe(SETTLE_MS - 2);
    // A checkout's three events, 4 ms apart: the newest decides.
    expect(settleWaitMs(rows(12, 8, 4))).toBe(SETTLE_MS - 4);
  });

  it('hands over once the newest event has settled', () => {
    expect(settleWaitMs(rows(SETTLE_MS))).toBe(0);
    expect(settleWaitMs(rows(90, SETTLE_MS + 1))).toBe(0);
  });

  it('never holds past the bound after the oldest event, however often new ones come', () => {
    expect(settleWaitMs(rows(MAX_HOLD_MS, 1))).toBe(0);
    expect(settleWaitMs(rows(MAX_HOLD_MS - 5, 1))).toBe(5);
    // A row back from a back-off is old: no wait.
    expect(settleWaitMs(rows(60_000))).toBe(0);
  });

  it('never holds a store notification (one event per group)', () => {
    const store: Handover = {
      kind: 'store',
      notification: {
        tenantId: '00000000-0000-4000-8000-000000000001',
        provider: 'store_ios',
        connectionId: 'c',
        mode: 'test',
        eventId: 'n1',
        kind: 'renewed',
        purchase: 'sealed',
      } as never,
    };
    expect(settleWaitMs([{ handover: store, age_ms: 0 }])).toBe(0);
  });
});
