import { describe, expect, it } from 'vitest';
import { ENTITLEMENT_STATES, type EntitlementState } from '../../domain/entitlement';
import { CANONICAL_EVENT_KINDS } from '../../domain/events';
import {
  registrationRefusal,
  storeEntitlementOf,
  storeEntitlementState,
  storeHeldFacts,
  storeSubscriptionStatus,
  type StorePurchaseRead,
} from '../../domain/store-purchase';

const read = (over: Partial<StorePurchaseRead> = {}): StorePurchaseRead => ({
  provider: 'store_android',
  purchase_key: 'tok',
  store_product_id: 'premium_monthly',
  store_app_user: null,
  is_sandbox: true,
  state: 'active',
  expires_at: null,
  acknowledged: false,
  read_at: '2026-01-01T00:00:00.000Z',
  ...over,
});

describe('registrationRefusal', () => {
  it.each([
    ['sandbox purchase, test key, no named buyer', read(), 'test', 'u', null],
    ['sandbox purchase, test key, the named buyer', read({ store_app_user: 'u' }), 'test', 'u', null],
    ['real purchase, live key', read({ is_sandbox: false }), 'live', 'u', null],
    ['sandbox purchase, live key', read(), 'live', 'u', 'invalid_purchase'],
    ['real purchase, test key', read({ is_sandbox: false }), 'test', 'u', 'invalid_purchase'],
    ['another buyer named by the store', read({ store_app_user: 'v' }), 'test', 'u', 'purchase_token_reused'],
    ['not paid yet', read({ state: 'pending' }), 'test', 'u', 'purchase_pending'],
  ] as const)('%s → %s', (_name, r, mode, caller, code) => {
    expect(registrationRefusal(r, mode, caller)?.error ?? null).toBe(code);
  });
});

describe('storeEntitlementState over every (store state × current state × event kind)', () => {
  const states = [...ENTITLEMENT_STATES, 'pending'] as const;
  const currents = [null, ...ENTITLEMENT_STATES] as const;
  const hints = [null, ...CANONICAL_EVENT_KINDS] as const;
  for (const s of states)
    for (const c of currents)
      for (const h of hints) {
        const expected: EntitlementState | null =
          s === 'pending'
            ? null
            : (s === 'expired' || s === 'revoked') && (h === 'refunded' || c === 'revoked')
              ? 'revoked'
              : s;
        it(`store ${s}, current ${c}, hint ${h} → ${expected}`, () => {
          expect(storeEntitlementState({ state: s }, c, h)).toBe(expected);
        });
      }

  it('the store granting access again undoes a revocation (a reversed refund)', () => {
    expect(storeEntitlementState({ state: 'active' }, 'revoked', null)).toBe('active');
  });
});

describe('storeSubscriptionStatus', () => {
  it('maps each entitlement state to the record status, and back', () => {
    expect(ENTITLEMENT_STATES.map(storeSubscriptionStatus)).toEqual(['active', 'past_due', 'expired', 'refunded']);
    expect(ENTITLEMENT_STATES.map((e) => storeEntitlementOf(storeSubscriptionStatus(e)))).toEqual([
      ...ENTITLEMENT_STATES,
    ]);
  });
});

describe('storeHeldFacts: what a reconciliation compares with the record', () => {
  const end = '2026-12-01T00:00:00.000Z';
  it('is what the store write would hold: status from the same rules, the paid period from the store', () => {
    expect(storeHeldFacts(read({ state: 'active', expires_at: end }), null)).toEqual({
      state: 'active',
      status: 'active',
      current_period_end: end,
    });
    expect(storeHeldFacts(read({ state: 'grace_period', expires_at: end }), 'active')?.status).toBe('past_due');
    expect(storeHeldFacts(read({ state: 'revoked', expires_at: end }), 'active')?.status).toBe('refunded');
  });
  it('a revoked record stays revoked when Play reads EXPIRED (no repair back to expired); pending holds nothing', () => {
    expect(storeHeldFacts(read({ state: 'expired', expires_at: end }), 'revoked')?.status).toBe('refunded');
    expect(storeHeldFacts(read({ state: 'expired', expires_at: end }), 'active')?.status).toBe('expired');
    expect(storeHeldFacts(read({ state: 'pending' }), null)).toBeNull();
  });
});
