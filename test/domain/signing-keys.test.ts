import { describe, expect, it } from 'vitest';
import {
  ROTATION_INTERVAL_MS,
  TOKENS_ONLY,
  TOKEN_MAX_LIFETIME_MS,
  isPublished,
  publishedKeys,
  publishedUntil,
  rotationDue,
  signerOf,
  type SigningKeyFacts,
} from '../../domain/signing-keys';

const t0 = new Date('2026-11-01T00:00:00Z');
const at = (ms: number) => new Date(t0.getTime() + ms);
const key = (kid: string, state: SigningKeyFacts['state'], created: number, retired: number | null = null) => ({
  kid,
  state,
  created_at: at(created),
  retired_at: retired === null ? null : at(retired),
});

describe('signing keys: which signs, which are published', () => {
  it('the active key signs; retired and withdrawn ones never do', () => {
    const keys = [key('old', 'retired', 0, 10), key('cur', 'active', 10), key('bad', 'withdrawn', 20)];
    expect(signerOf(keys)?.kid).toBe('cur');
    expect(signerOf([key('old', 'retired', 0, 10), key('bad', 'withdrawn', 20)])).toBeNull();
  });

  it('a retired key stays published exactly as long as a token it signed can live, then goes', () => {
    const retired = key('old', 'retired', 0, 1_000);
    expect(publishedUntil(retired, TOKENS_ONLY)).toEqual(at(1_000 + TOKEN_MAX_LIFETIME_MS));
    expect(isPublished(retired, at(1_000 + TOKEN_MAX_LIFETIME_MS - 1), TOKENS_ONLY)).toBe(true);
    expect(isPublished(retired, at(1_000 + TOKEN_MAX_LIFETIME_MS), TOKENS_ONLY)).toBe(false);
  });

  it('digests served longer than a token lives keep their key published that long; for ever when served for ever', () => {
    const retired = key('old', 'retired', 0, 0);
    const year = 365 * 24 * 3_600_000;
    expect(isPublished(retired, at(year - 1), { ...TOKENS_ONLY, digestMs: year })).toBe(true);
    expect(isPublished(retired, at(year), { ...TOKENS_ONLY, digestMs: year })).toBe(false);
    expect(isPublished(retired, at(100 * year), { ...TOKENS_ONLY, digestMs: Infinity })).toBe(true);
  });

  it('a withdrawn key is never published, whatever the retention; the active one always is', () => {
    expect(isPublished(key('bad', 'withdrawn', 0), t0, { tokenMs: Infinity, digestMs: Infinity })).toBe(false);
    expect(isPublished(key('cur', 'active', 0), at(100 * ROTATION_INTERVAL_MS), TOKENS_ONLY)).toBe(true);
  });

  it('the published set lists the newest first and leaves out what no longer needs checking', () => {
    const keys = [
      key('a', 'retired', 0, 5),
      key('c', 'active', 20),
      key('b', 'retired', 5, 20),
      key('w', 'withdrawn', 30),
    ];
    expect(publishedKeys(keys, at(21), TOKENS_ONLY).map((k) => k.kid)).toEqual(['c', 'b', 'a']);
    expect(publishedKeys(keys, at(5 + TOKEN_MAX_LIFETIME_MS), TOKENS_ONLY).map((k) => k.kid)).toEqual(['c', 'b']);
  });

  it('the schedule rotates a signer once it is as old as the interval, and makes one when there is none', () => {
    expect(rotationDue(null, t0)).toBe(true);
    expect(rotationDue(key('cur', 'active', 0), at(ROTATION_INTERVAL_MS - 1))).toBe(false);
    expect(rotationDue(key('cur', 'active', 0), at(ROTATION_INTERVAL_MS))).toBe(true);
    expect(rotationDue(key('cur', 'active', 0), at(10), 10)).toBe(true);
  });
});
