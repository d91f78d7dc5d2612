import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { afterFailedAttempt, MAX_RETRY_INTERVAL_MS, windowText } from '../../domain/outbound-retry';

const DAY = 86_400_000;
const defaults = { attemptTimeoutMs: 10_000, firstRetryMs: 5_000, retryWindowMs: 3 * DAY };

/** Every failure of one delivery from its first attempt on, each attempt made when it was due. */
function schedule(policy: typeof defaults): { retries: number[]; giveUp: string } {
  const start = 0;
  let now = start;
  const retries: number[] = [];
  for (let attempts = 1; ; attempts++) {
    const d = afterFailedAttempt(policy, attempts, start, now);
    if ('giveUp' in d) return { retries, giveUp: d.giveUp };
    retries.push(d.retryAtMs - now);
    now = d.retryAtMs;
  }
}

describe('outbound retry schedule', () => {
  it('defaults: 5 s, doubling, capped at 2 h, 46 attempts in three days, then gives up naming the window', () => {
    const { retries, giveUp } = schedule(defaults);
    expect(retries.slice(0, 4)).toEqual([5_000, 10_000, 20_000, 40_000]);
    expect(Math.max(...retries)).toBe(MAX_RETRY_INTERVAL_MS);
    expect(retries.length + 1).toBe(46);
    expect(giveUp).toBe('no 2xx within the retry window (72 h)');
  });

  it('never schedules past the window, never waits longer than the cap, never shrinks the interval', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60_000 }),
        fc.integer({ min: 1, max: 7 * DAY }),
        (firstRetryMs, retryWindowMs) => {
          const policy = { attemptTimeoutMs: 1_000, firstRetryMs, retryWindowMs };
          const { retries } = schedule(policy);
          expect(retries.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(retryWindowMs);
          for (let i = 1; i < retries.length; i++) expect(retries[i]).toBeGreaterThanOrEqual(retries[i - 1]);
          for (const r of retries) expect(r).toBeLessThanOrEqual(Math.max(firstRetryMs, MAX_RETRY_INTERVAL_MS));
        },
      ),
    );
  });

  it('a replay opens a new window: the same attempt count is retried again', () => {
    const late = afterFailedAttempt(defaults, 30, 0, 3 * DAY - 1_000);
    expect(late).toHaveProperty('giveUp');
    const replayed = afterFailedAttempt(defaults, 30, 3 * DAY - 1_000, 3 * DAY - 1_000);
    expect(replayed).toEqual({ retryAtMs: 3 * DAY - 1_000 + MAX_RETRY_INTERVAL_MS });
  });

  it('names windows as people write them', () => {
    expect([windowText(3 * DAY), windowText(15 * 60_000), windowText(8_000)]).toEqual(['72 h', '15 min', '8 s']);
  });
});
