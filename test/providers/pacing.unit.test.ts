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

  it('App Store lookups: each Server API endpoint on its own allowance (5 a second in the sandbox), apart from the Connect calls; a 429 holds both endpoints', async () => {
    const pacer = createPacer();
    const lookup = pacer.pace('store_ios', 'test', 'app_1', 'lookup');
    const times: Record<string, number[]> = { transactions: [], subscriptions: [] };
    const t0 = Date.now();
    await Promise.all(
      Array.from({ length: 12 }, async () => {
        for (const endpoint of ['transactions', 'subscriptions']) {
          await lookup(endpoint);
          times[endpoint].push(Date.now());
        }
      }),
    );
    // 12 lookups at 5 a second: the 11th and 12th wait for a third window.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(2000);
    for (const endpoint of ['transactions', 'subscriptions']) expect(maxInAnyWindow(times[endpoint], 1000)).toBe(5);
    // The Connect API's allowance (3,600 an hour) is not drawn from by lookups: its burst is whole.
    const connect = pacer.pace('store_ios', 'test', 'app_1');
    const t1 = Date.now();
    await Promise.all(Array.from({ length: 20 }, () => connect()));
    expect(Date.now() - t1).toBeLessThan(500);
    pacer.holdOff('store_ios', 'test', 'app_1', 700, 'lookup');
    const t2 = Date.now();
    await Promise.all([lookup('transactions'), lookup('subscriptions')]);
    expect(Date.now() - t2).toBeGreaterThanOrEqual(690);
  });
});
