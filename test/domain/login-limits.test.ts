import { describe, expect, it } from 'vitest';
import { backoffWindows, DEFAULT_LIMITS } from '../../domain/login-limits';

describe('login limits: the account-wide back-off (docs/limits.md)', () => {
  it('the account allows 20 wrong passwords per window; each full allowance doubles the next window, 15 min up to a day', () => {
    expect(DEFAULT_LIMITS.account.max).toBe(20);
    expect(backoffWindows(DEFAULT_LIMITS.account).map((s) => s / 60)).toEqual([15, 30, 60, 120, 240, 480, 960, 1440]);
  });

  it('a limit without a back-off keeps one window', () => {
    expect(backoffWindows(DEFAULT_LIMITS.pair)).toEqual([DEFAULT_LIMITS.pair.windowSeconds]);
    expect(backoffWindows({ max: 1, windowSeconds: 60, maxWindowSeconds: 100 })).toEqual([60, 100]);
  });
});
