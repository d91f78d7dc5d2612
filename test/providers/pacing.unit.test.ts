import { describe, expect, it } from 'vitest';
import { createPacer } from '../../providers/pacing';

const maxInAnyWindow = (times: number[], windowMs: number) => {
  const s = [...times].sort((a, b) => a - b);
  let best = 0;
  let lo = 0;
  for (let hi = 0; hi < s.length; hi++) {
    while (s[hi] - s[lo] >= windowMs) lo++;
    best = Math.max(best, hi - lo + 1);
  }
  return best;
};

describe('the worker-wide pacer', () => {
  it('lets 60 concurrent psp_a test-mode calls through at no more than 25 in any second, in order', async () => {
    const pace = createPacer().pace('psp_a', 'test', 'acct_1');
    const t0 = Date.now();
    const order: number[] = [];
    const times = await Promise.all(
      Array.from({ length: 60 }, async (_, i) => {
        await pace();
        order.push(i);
        return Date.now();
      }),
    );
    expect(maxInAnyWindow(times, 1000)).toBeLessThanOrEqual(25);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(2000);
    expect(order).toEqual([...order].sort((a, b) => a - b));
  });

  it('accounts are paced apart, but Paddle (per IP) shares one allowance across accounts', async () => {
    const pacer = createPacer();
    const a = pacer.pace('psp_a', 'test', 'acct_1');
    const b = pacer.pace('psp_a', 'test', 'acct_2');
    const t0 = Date.now();
    await Promise.all([...Array.from({ length: 25 }, () => a()), ...Array.from({ length: 25 }, () => b())]);
    expect(Date.now() - t0).toBeLessThan(500);
    const p1 = pacer.pace('psp_b', 'test', 'seller_1');
    const p2 = pacer.pace('psp_b', 'test', 'seller_2');
    const t1 = Date.now();
    // Paddle: a burst of 12, then ~3.8 a second for everyone behind the same IP.
    await Promise.all([...Array.from({ length: 8 }, () => p1()), ...Array.from({ length: 8 }, () => p2())]);
    expect(Date.now() - t1).toBeGreaterThanOrEqual(700);
  });

  it('after a 429 nobody calls on that allowance until the delay has passed', async () => {
    const pacer = createPacer();
    const pace = pacer.pace('psp_c', 'test', 'acct_1');
    await pace();
    pacer.holdOff('psp_c', 'test', 'acct_1', 600);
    const t0 = Date.now();
    await pace();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(590);
  });
});
