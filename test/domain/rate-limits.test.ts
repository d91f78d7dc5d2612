import { describe, expect, it } from 'vitest';
import { PROVIDERS, MODES } from '../../domain/providers';
import { pacingRule, perSecond, rateKey, RATE_LIMITS, SlidingWindow, syncConcurrency } from '../../domain/rate-limits';

/** A caller that calls as soon as the rule lets it, for `ms`; returns the call times. */
function greedy(rule: { take(now: number): number }, ms: number, jitter = 0): number[] {
  const sent: number[] = [];
  let now = 0;
  let k = 0;
  while (now < ms) {
    const wait = rule.take(now);
    if (wait === 0) {
      // Arrival at the provider: up to `jitter` ms later than the send, alternating.
      sent.push(now + (k++ % 2 ? jitter : 0));
    } else now += wait;
  }
  return sent.sort((a, b) => a - b);
}

const maxInAnyWindow = (times: number[], windowMs: number) => {
  let best = 0;
  let lo = 0;
  for (let hi = 0; hi < times.length; hi++) {
    while (times[hi] - times[lo] >= windowMs) lo++;
    best = Math.max(best, hi - lo + 1);
  }
  return best;
};

describe('documented rate limits and the pacing rule', () => {
  it('every provider and mode has a limit with a source', () => {
    for (const p of PROVIDERS)
      for (const m of MODES)
        expect(RATE_LIMITS[p][m]).toMatchObject({
          limit: expect.any(Number),
          windowMs: expect.any(Number),
          source: expect.stringContaining('http'),
        });
    expect(perSecond(RATE_LIMITS.psp_a.live)).toBe(100);
    expect(perSecond(RATE_LIMITS.psp_a.test)).toBe(25);
    expect(perSecond(RATE_LIMITS.psp_b.test)).toBe(4);
  });

  it('Paddle counts per IP (mode only), the others per account', () => {
    expect(rateKey('psp_b', 'test', 'acct_1')).toBe(rateKey('psp_b', 'test', 'acct_2'));
    expect(rateKey('psp_a', 'test', 'acct_1')).not.toBe(rateKey('psp_a', 'test', 'acct_2'));
    expect(rateKey('psp_a', 'test', 'acct_1')).not.toBe(rateKey('psp_a', 'live', 'acct_1'));
  });

  it('the sliding window admits at most `limit` per window and says how long to wait', () => {
    const w = new SlidingWindow(3, 1000);
    expect([w.take(0), w.take(10), w.take(20)]).toEqual([0, 0, 0]);
    expect(w.take(30)).toBe(970);
    expect(w.take(1000)).toBe(0);
    expect(w.inWindow(1000)).toBe(3);
  });

  for (const p of PROVIDERS) {
    for (const m of MODES) {
      it(`${p} ${m}: a greedy caller paced by the rule never exceeds the documented limit, even with 40 ms arrival jitter, and gets ≥ 0.9 of it`, () => {
        const r = RATE_LIMITS[p][m];
        const span = Math.min(r.windowMs * 3, 3 * 3_600_000);
        const times = greedy(pacingRule(r), span, 40);
        expect(maxInAnyWindow(times, r.windowMs)).toBeLessThanOrEqual(r.limit);
        expect(times.length / (span / r.windowMs) / r.limit).toBeGreaterThanOrEqual(0.9);
      });
    }
  }

  it('lanes follow the allowance: two for a few calls a second, more for more, never above 24', () => {
    expect(syncConcurrency('psp_b', 'test')).toBe(2);
    expect(syncConcurrency('psp_a', 'test')).toBeGreaterThan(syncConcurrency('psp_c', 'test'));
    expect(syncConcurrency('psp_a', 'live')).toBe(24);
  });
});
