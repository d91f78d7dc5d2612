import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiProcess, type ApiProcess } from '../helpers/api-process';
import { call, newTenant, startApi } from '../helpers/api';
import { testDb } from '../helpers/db';
import { CLIENT_LIMITS } from '../../api/sdk/limits';

/**
 * Publishable keys are public (shipped in apps): what they spend must never be what the
 * tenant's secret keys need. The client endpoints have buckets of their own, per tenant (large),
 * per app user and per client address (small), kept in Postgres.
 */
describe('client endpoint limits', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(async () => api.close());

  const sdk = (t: { publishable_key: string }, user: string) =>
    call(api.apiRoot, `/v1/sdk/subscribers/${encodeURIComponent(user)}`, t.publishable_key);
  const toolsList = (secret: string) =>
    fetch(`${api.toolsUrl}/`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${secret}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });

  it('a publishable key cannot lock the tenant out of its management API or tool server', async () => {
    const t = await newTenant('pk-lockout');
    // More than the management bucket holds (120), spread over app users as an app's installs would be.
    for (let i = 0; i < 130; i++) expect((await sdk(t, `user-${i}`)).status).toBe(200);
    const mgmt = await call(api.apiUrl, '/tenant', t.secret_key);
    expect(mgmt.status).toBe(200);
    // The management bucket is untouched: this is its first token.
    expect(mgmt.headers.get('ratelimit-remaining')).toBe('119');
    expect((await toolsList(t.secret_key)).status).toBe(200);
  });

  it('one app user in a loop gets 429 rate_limited with Retry-After; other users and the management API do not', async () => {
    const t = await newTenant('pk-user');
    const statuses: number[] = [];
    let limited;
    for (let i = 0; i < CLIENT_LIMITS.user.capacity + 10 && !limited; i++) {
      const r = await sdk(t, 'looping-user');
      statuses.push(r.status);
      if (r.status === 429) limited = r;
    }
    expect(limited).toBeDefined();
    // At least the burst went through before the refusal (plus at most what refilled meanwhile).
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(CLIENT_LIMITS.user.capacity);
    expect(limited!.body).toMatchObject({ error: 'rate_limited', detail: expect.stringMatching(/app user/) });
    expect(Number(limited!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(limited!.headers.get('ratelimit-limit')).toBe(String(CLIENT_LIMITS.user.capacity));
    expect(limited!.headers.get('ratelimit-remaining')).toBe('0');

    // A refused request writes nothing: the user's bucket row is as it was.
    const row = () =>
      testDb()('client_rate_limit_buckets').where({ tenant_id: t.tenant_id, bucket: 'user:looping-user' }).first();
    await testDb()('client_rate_limit_buckets')
      .where({ tenant_id: t.tenant_id, bucket: 'user:looping-user' })
      .update({ tokens: 0, refreshed_at: testDb().raw("now() + interval '1 hour'") });
    const before = await row();
    const tenantBefore = await testDb()('client_rate_limit_buckets')
      .where({ tenant_id: t.tenant_id, bucket: 'sdk' })
      .first();
    expect((await sdk(t, 'looping-user')).status).toBe(429);
    expect(await row()).toEqual(before);
    expect(
      await testDb()('client_rate_limit_buckets').where({ tenant_id: t.tenant_id, bucket: 'sdk' }).first(),
    ).toEqual(tenantBefore);

    expect((await sdk(t, 'another-user')).status).toBe(200);
    expect((await call(api.apiUrl, '/tenant', t.secret_key)).headers.get('ratelimit-remaining')).toBe('119');
  });

  it('the tenant’s client bucket, once empty, refuses every app user but the premium check (issue #28: answered from stored state); the management API still answers', async () => {
    const t = await newTenant('pk-tenant');
    await testDb()('client_rate_limit_buckets').insert({
      tenant_id: t.tenant_id,
      bucket: 'sdk',
      tokens: 0,
      refreshed_at: testDb().raw("now() + interval '1 hour'"),
    });
    // The premium check is a read of stored state: an empty tenant bucket alone does not refuse it (docs/limits.md).
    expect(await sdk(t, 'anyone')).toMatchObject({ status: 200, body: { is_premium: false } });
    const r = await call(api.apiRoot, '/v1/sdk/paywall', t.publishable_key);
    expect(r).toMatchObject({ status: 429, body: { error: 'rate_limited' } });
    expect(r.headers.get('ratelimit-limit')).toBe(String(CLIENT_LIMITS.tenant.capacity));
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await call(api.apiUrl, '/tenant', t.secret_key)).status).toBe(200);
    // Another tenant's apps are unaffected.
    expect((await sdk(await newTenant('pk-bystander'), 'anyone')).status).toBe(200);
  });

  it('one client address is limited across app users (per tenant)', async () => {
    const t = await newTenant('pk-addr');
    const other = await newTenant('pk-addr-other');
    // The loopback address of this test has spent its bucket (its row says so).
    const [{ bucket }] = await testDb()('client_rate_limit_buckets')
      .insert({
        tenant_id: t.tenant_id,
        bucket: 'addr:127.0.0.1',
        tokens: 0,
        refreshed_at: testDb().raw("now() + interval '1 hour'"),
      })
      .returning('bucket');
    expect(bucket).toBe('addr:127.0.0.1');
    const r = await sdk(t, 'fresh-user');
    expect(r).toMatchObject({ status: 429, body: { error: 'rate_limited', detail: expect.stringMatching(/address/) } });
    // Keyed with the tenant: the same address is free for another tenant's app.
    expect((await sdk(other, 'fresh-user')).status).toBe(200);
  });
});

describe('client limits are shared by replicas', () => {
  let apis: ApiProcess[] = [];
  let ports: number[] = [];
  beforeAll(async () => {
    apis = await Promise.all([startApiProcess(), startApiProcess()]);
    ports = apis.map((a) => a.apiPort);
  });
  afterAll(async () => {
    await Promise.all(apis.map((a) => a.stop()));
  });

  it('two api processes draw from one bucket per app user', async () => {
    const t = await newTenant('pk-replicas');
    const cap = CLIENT_LIMITS.user.capacity;
    const statuses: number[] = [];
    const started = Date.now();
    await Promise.all(
      ports.map(async (port) => {
        for (let i = 0; i < cap; i++)
          statuses.push(
            (await call(`http://127.0.0.1:${port}`, '/v1/sdk/subscribers/shared-user', t.publishable_key)).status,
          );
      }),
    );
    const ok = statuses.filter((s) => s === 200).length;
    const elapsedS = (Date.now() - started) / 1000;
    // Separate buckets would let all 2 × capacity through; one shared bucket, capacity plus the refill.
    expect(ok).toBeGreaterThanOrEqual(cap);
    expect(ok).toBeLessThanOrEqual(cap + Math.ceil(elapsedS * CLIENT_LIMITS.user.refillPerSecond));
    expect(statuses.filter((s) => s === 429).length).toBe(2 * cap - ok);
  });
});
