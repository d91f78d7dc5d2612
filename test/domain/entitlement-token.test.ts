import { describe, expect, it } from 'vitest';
import { LAPSED_END_SECONDS, entitlementTokenClaims, type TokenEntitlementFacts } from '../../domain/entitlement-token';

const now = new Date('2026-11-28T10:00:00.000Z');
const iat = now.getTime() / 1000;
const at = (s: number) => new Date((iat + s) * 1000).toISOString();
const claims = (entitlements: TokenEntitlementFacts[]) =>
  entitlementTokenClaims({
    issuer: 'https://api.example',
    tenantId: 't1',
    mode: 'live',
    appUserId: 'u',
    entitlements,
    now,
  });

describe('entitlement token claims', () => {
  it('24 h when nothing ends sooner; aud names the tenant and the side', () => {
    const c = claims([{ id: 'e1', identifier: 'premium', state: 'active', expires_at: null, grace_until: null }]);
    expect(c).toMatchObject({ aud: 't1:live', sub: 'u', premium: true, iat, exp: iat + 86_400 });
    expect(claims([]).exp).toBe(iat + 86_400);
  });

  it('exp is the earliest end of the listed access, grace included; ended states are not listed', () => {
    const c = claims([
      { id: 'a', identifier: 'premium', state: 'active', expires_at: at(7200), grace_until: null },
      { id: 'g', identifier: 'premium', state: 'grace_period', expires_at: at(-10), grace_until: at(3600) },
      { id: 'x', identifier: 'premium', state: 'revoked', expires_at: at(60), grace_until: null },
    ]);
    expect(c.exp).toBe(iat + 3600);
    expect(c.entitlements).toEqual([
      { id: 'a', expires_at: at(7200) },
      { id: 'g', expires_at: at(3600) },
    ]);
    for (const e of c.entitlements) expect(c.exp * 1000).toBeLessThanOrEqual(Date.parse(e.expires_at!));
  });

  it('access still active past its stated end (a renewal not heard of yet) is vouched for a minute at a time', () => {
    const c = claims([{ id: 'a', identifier: 'premium', state: 'active', expires_at: at(-3600), grace_until: null }]);
    expect(c).toMatchObject({ premium: true, exp: iat + LAPSED_END_SECONDS });
    expect(c.entitlements).toEqual([{ id: 'a', expires_at: at(LAPSED_END_SECONDS) }]);
  });

  it('a fractional end rounds down: the token never outlives it', () => {
    const end = new Date(now.getTime() + 1500).toISOString();
    expect(claims([{ id: 'a', identifier: 'premium', state: 'active', expires_at: end, grace_until: null }]).exp).toBe(
      iat + 1,
    );
  });
});

describe('active_entitlements: the identifiers a gateway matches as a list of strings', () => {
  it('each active identifier once, sorted; ended access unlocks nothing', () => {
    const c = claims([
      { id: 'a', identifier: 'pro', state: 'active', expires_at: null, grace_until: null },
      { id: 'b', identifier: 'premium', state: 'grace_period', expires_at: at(-10), grace_until: at(60) },
      { id: 'c', identifier: 'pro', state: 'active', expires_at: at(7200), grace_until: null },
      { id: 'd', identifier: 'gold', state: 'expired', expires_at: at(-60), grace_until: null },
    ]);
    expect(c.active_entitlements).toEqual(['premium', 'pro']);
    expect(claims([]).active_entitlements).toEqual([]);
  });
});
