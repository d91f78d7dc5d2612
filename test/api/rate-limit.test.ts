import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiProcess, type ApiProcess } from '../helpers/api-process';
import { assertMatchesOpenApi, call, keyWith, newTenant, startApi } from '../helpers/api';
import { revokeApiKey } from '../../db/tenants';
import { testDb } from '../helpers/db';

describe('rate limit: 120-token bucket per tenant, refilling 1/s', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(async () => api.close());

  it('the 121st request in a burst gets 429 rate_limited with Retry-After and RateLimit headers; other tenants are unaffected', async () => {
    const t = await newTenant('burst');
    const other = await newTenant('bystander');
    // Both hosts draw from the same bucket.
    const replies = [];
    const started = Date.now();
    for (let i = 0; i < 125; i++) replies.push(await call(i % 2 ? api.altUrl : api.apiUrl, '/tenant', t.secret_key));
    const elapsedS = (Date.now() - started) / 1000;
    const statuses = replies.map((r) => r.status);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(120);
    // Beyond the 120 of the burst, only what refilled (1/s) while it ran.
    expect(statuses.filter((s) => s === 200).length).toBeLessThanOrEqual(120 + Math.ceil(elapsedS));
    expect(statuses).toContain(429);
    const limited = replies.find((r) => r.status === 429)!;
    expect(limited.body.error).toBe('rate_limited');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(limited.headers.get('ratelimit-limit')).toBe('120');
    expect(limited.headers.get('ratelimit-remaining')).toBe('0');
    assertMatchesOpenApi('GET', '/tenant', limited);
    expect(replies[0].headers.get('ratelimit-remaining')).toBe('119');
    expect((await call(api.apiUrl, '/tenant', other.secret_key)).status).toBe(200);

    await new Promise((r) => setTimeout(r, 1100 * Number(limited.headers.get('retry-after'))));
    expect((await call(api.apiUrl, '/tenant', t.secret_key)).status).toBe(200);
  });
});

describe('rate limit cannot be spent by dead keys', () => {
  it('revoked or expired keys get 401 without draining their tenant’s bucket', async () => {
    const api = await startApi();
    try {
      const t = await newTenant('drain');
      const dead = await keyWith(t.tenant_id, ['tenant:read']);
      await revokeApiKey(testDb(), dead.key_id);
      const expired = await keyWith(t.tenant_id, ['tenant:read'], { expiresInSeconds: 1 });
      await testDb()('api_keys').where({ id: expired.key_id }).update({ expires_at: new Date(Date.now() - 1000) });
      for (let i = 0; i < 65; i++) {
        expect((await call(api.apiUrl, '/tenant', dead.secret_key)).status).toBe(401);
        expect((await call(api.apiUrl, '/tenant', expired.secret_key)).status).toBe(401);
      }
      const ok = await call(api.apiUrl, '/tenant', t.secret_key);
      expect(ok.status).toBe(200);
      expect(ok.headers.get('ratelimit-remaining')).toBe('119');
    } finally {
      await api.close();
    }
  });
});

describe('rate limit is shared by replicas', () => {
  let apis: ApiProcess[] = [];
  let ports: number[] = [];
  beforeAll(async () => {
    apis = await Promise.all([startApiProcess(), startApiProcess()]);
    ports = apis.map((a) => a.apiPort);
  });
  afterAll(async () => {
    await Promise.all(apis.map((a) => a.stop()));
  });

  it('two api processes draw from one bucket', async () => {
    const t = await newTenant('replicas');
    const statuses: number[] = [];
    const started = Date.now();
    await Promise.all(
      ports.map(async (port) => {
        for (let i = 0; i < 70; i++) statuses.push((await call(`http://127.0.0.1:${port}/v1`, '/tenant', t.secret_key)).status);
      }),
    );
    const ok = statuses.filter((s) => s === 200).length;
    expect(ok).toBeGreaterThanOrEqual(120);
    const elapsedS = (Date.now() - started) / 1000;
    // Separate buckets would let all 140 through; one shared bucket allows 120 plus the refill.
    expect(ok).toBeLessThanOrEqual(120 + Math.ceil(elapsedS));
    expect(ok).toBeLessThan(140);
    expect(statuses.filter((s) => s === 429).length).toBe(140 - ok);
  });
});
