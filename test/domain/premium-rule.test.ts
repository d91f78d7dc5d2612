import { describe, expect, it } from 'vitest';
import { ENTITLEMENT_STATES, PREMIUM_STATES, isPremium, isPremiumState } from '../../domain/entitlement';
import * as sdk from '../../sdk/src/premium';

describe('"is premium": one rule', () => {
  it('grants access while active or in a grace period, never when expired or revoked', () => {
    expect(ENTITLEMENT_STATES.filter(isPremiumState)).toEqual(['active', 'grace_period']);
    expect(isPremiumState('unknown')).toBe(false);
  });

  it('a subscriber is premium when any entitlement grants access, and not with none', () => {
    expect(isPremium([])).toBe(false);
    expect(isPremium([{ state: 'expired' }, { state: 'revoked' }])).toBe(false);
    expect(isPremium([{ state: 'expired' }, { state: 'grace_period' }])).toBe(true);
    expect(isPremium([{ state: 'active' }])).toBe(true);
  });

  it("the SDK's offline fallback (a separate package) answers the same on every state", () => {
    expect([...sdk.PREMIUM_STATES]).toEqual([...PREMIUM_STATES]);
    for (const state of [...ENTITLEMENT_STATES, 'unknown', ''])
      expect([state, sdk.isPremiumState(state)]).toEqual([state, isPremiumState(state)]);
  });
});
