import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTenant, startApi } from '../helpers/api';
import { testDb } from '../helpers/db';

/**
 * MCP's Streamable HTTP transport has had no JSON-RPC batching since 2025-06-18. A batch used
 * to spend one token for any number of calls; it is now refused whole (-32600, HTTP 400)
 * before it spends anything.
 */
describe('tool server: JSON-RPC batches', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(async () => api.close());

  const post = (key: string, body: unknown) =>
    fetch(`${api.toolsUrl}/`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify(body),
    });
  const call = (id: number) => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'billing_apps', arguments: {} },
  });

  it('a batch of tools/call is refused with -32600 Invalid Request (HTTP 400) and spends no token', async () => {
    const t = await newTenant('batch');
    const r = await post(
      t.secret_key,
      Array.from({ length: 50 }, (_, i) => call(i + 1)),
    );
    expect(r.status).toBe(400);
    expect(await r.json()).toMatchObject({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: expect.stringMatching(/batch/i) },
    });
    expect(await testDb()('rate_limit_buckets').where({ tenant_id: t.tenant_id }).first()).toBeUndefined();
    // One call by itself still works, and is the first token the tenant spends.
    const one = await post(t.secret_key, call(1));
    expect(one.status).toBe(200);
    expect(one.headers.get('ratelimit-remaining')).toBe('119');
    expect((await one.json()).result.isError).toBeFalsy();
  });

  it('150 batched calls cannot get past a bucket of 120', async () => {
    const t = await newTenant('batch-drain');
    let answered = 0;
    for (let b = 0; b < 3; b++) {
      const r = await post(
        t.secret_key,
        Array.from({ length: 50 }, (_, i) => call(b * 50 + i + 1)),
      );
      if (r.status === 200) answered += ((await r.json()) as unknown[]).length;
      else await r.body?.cancel();
    }
    expect(answered).toBe(0);
  });

  it('a batch with a bad key is the same 401 as any request with a bad key', async () => {
    const r = await post('sk_' + 'x'.repeat(40), [call(1), call(2)]);
    expect(r.status).toBe(401);
    expect(await r.json()).toMatchObject({ error: 'invalid_api_key' });
  });
});
