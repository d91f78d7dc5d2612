import type Koa from 'koa';
import { describe, expect, it } from 'vitest';
import { createRateLimiter } from '../../emulators/common/rate-limit';

/** The little of a Koa context the limiter reads and writes. */
function request(path: string) {
  const headers: Record<string, string> = {};
  const ctx = {
    path,
    status: 200,
    type: '',
    body: undefined as unknown,
    get: () => 'Bearer x',
    set: (k: string, v: string) => (headers[k.toLowerCase()] = v),
  };
  return { ctx, headers, koa: ctx as unknown as Koa.Context };
}

describe('the App Store emulator enforces the Server API lookup limit', () => {
  it('5 Get All Subscription Statuses a second in the sandbox, counted apart from Get Transaction Info; the 6th gets RateLimitExceededError with Retry-After in ms', () => {
    const limiter = createRateLimiter('store_ios', { enabled: true }, () => 'test');
    for (let i = 0; i < 5; i++) expect(limiter.admit(request(`/inApps/v1/subscriptions/${i}`).koa)).toBe(true);
    for (let i = 0; i < 5; i++) expect(limiter.admit(request(`/inApps/v1/transactions/${i}`).koa)).toBe(true);
    const over = request('/inApps/v1/subscriptions/6');
    expect(limiter.admit(over.koa)).toBe(false);
    expect(over.ctx.status).toBe(429);
    expect(over.ctx.body).toEqual({ errorCode: 4290000, errorMessage: 'Rate limit exceeded.' });
    expect(Number(over.headers['retry-after'])).toBeGreaterThan(Date.now());
    const view = limiter.view();
    expect(view.scopes.map((s) => [s.key, s.kind, s.limit, s.accepted, s.limited])).toEqual([
      ['server-api:test:subscriptions', 'lookup', 5, 5, 1],
      ['server-api:test:transactions', 'lookup', 5, 5, 0],
    ]);
  });

  it('a key it does not know is not counted there (the API answers 401 itself)', () => {
    const limiter = createRateLimiter('store_ios', { enabled: true }, () => null);
    for (let i = 0; i < 10; i++) expect(limiter.admit(request(`/inApps/v1/subscriptions/${i}`).koa)).toBe(true);
  });
});
