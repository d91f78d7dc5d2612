import { describe, expect, it } from 'vitest';
import { generatePublishableKey, generateSecretKey } from '../../db/key-material';
import { keyHint, looksLikeSecretKey, providerKeyMode, publishableKeyMode, SECRET_KEY_RE } from '../../domain/keys';
import type { Mode, ProviderId } from '../../domain/providers';

describe('key shapes (domain/keys.ts)', () => {
  it('minted keys have the shapes the gates accept', () => {
    const secret = generateSecretKey();
    expect(secret).toMatch(SECRET_KEY_RE);
    expect(looksLikeSecretKey(secret)).toBe(true);
    expect(publishableKeyMode(secret)).toBeNull();
    expect(keyHint(secret)).toBe(`sk_…${secret.slice(-4)}`);
    for (const mode of ['test', 'live'] as const) {
      const pk = generatePublishableKey(mode);
      expect(pk.startsWith(`pk_${mode}_`)).toBe(true);
      expect(publishableKeyMode(pk)).toBe(mode);
      expect(looksLikeSecretKey(pk)).toBe(false);
      expect(SECRET_KEY_RE.test(pk)).toBe(false);
    }
  });

  it.each<[string, Mode | null]>([
    ['pk_test_0123456789abcdef', 'test'],
    ['pk_live_0123456789ABCDEF', 'live'],
    ['pk_test_short', null],
    ['pk_prod_0123456789abcdef', null],
    ['pk_test_0123456789abcde-', null],
  ])('publishable %s → %s', (key, mode) => {
    expect(publishableKeyMode(key)).toBe(mode);
  });

  it.each<[ProviderId, string, Mode | null]>([
    ['psp_a', 'sk_test_x', 'test'],
    ['psp_a', 'rk_live_x', 'live'],
    ['psp_a', 'pk_live_x', null],
    ['psp_b', 'pdl_sdbx_apikey_x', 'test'],
    ['psp_b', 'pdl_live_apikey_x', 'live'],
    ['psp_b', 'legacy0123', null],
    ['psp_c', 'rzp_test_oauth_x', 'test'],
    ['psp_c', 'rzp_live_x', 'live'],
    ['psp_c', 'sk_live_x', null],
    ['store_ios', 'rzp_live_x', null],
  ])('provider key %s %s → %s', (provider, key, mode) => {
    expect(providerKeyMode(provider, key)).toBe(mode);
  });
});
