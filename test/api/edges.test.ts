import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATIONS } from '../../operations';
import { MAX_OFFSET } from '../../operations/schemas';
import { testDb } from '../helpers/db';
import { call, keyWith, newTenant, refill, startApi } from '../helpers/api';

/** One raw HTTP/1.1 exchange, for what fetch will not send (duplicate headers, TRACE, huge headers). */
async function raw(url: string, lines: string[]): Promise<{ status: number; headers: string; body: any }> {
  const { hostname, port } = new URL(url);
  const text = await new Promise<string>((resolve, reject) => {
    const s = net.connect(Number(port), hostname, () =>
      s.write(`${lines.join('\r\n')}\r\nHost: ${hostname}\r\nConnection: close\r\n\r\n`),
    );
    let out = '';
    s.on('data', (d) => (out += d.toString('latin1')));
    s.on('end', () => resolve(out));
    s.on('error', reject);
  });
  const [head, ...rest] = text.split('\r\n\r\n');
  const status = Number(/^HTTP\/1\.1 (\d+)/.exec(head)?.[1]);
  let body: any = rest.join('\r\n\r\n');
  try {
    body = JSON.parse(body);
  } catch {
    /* keep text */
  }
  return { status, headers: head.toLowerCase(), body };
}

const listOps = OPERATIONS.filter((o) => o.rest?.method === 'GET' && !o.rest.path.includes('{'));

describe('client input never produces a 5xx', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let t: Awaited<ReturnType<typeof newTenant>>;
  beforeAll(async () => {
    api = await startApi();
    t = await newTenant('edges');
  });
  afterAll(async () => api.close());

  it('a NUL byte in any text filter of any list is 400 invalid_request naming the parameter', async () => {
    let checked = 0;
    for (const op of listOps) {
      const shape = (op.input as any).shape as Record<string, any> | undefined;
      for (const name of Object.keys(shape ?? {})) {
        if (name === 'limit' || name === 'offset') continue;
        await refill(t.tenant_id);
        const r = await call(api.apiUrl, `${op.rest!.path}?${name}=a%00b`, t.secret_key);
        expect(r.status, `${op.rest!.path}?${name}`).toBe(400);
        expect(r.body.error).toBe('invalid_request');
        expect(r.body.param).toBe(name);
        expect(r.body.detail).toContain(name);
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(10);
  });

  it('offset is bounded and refused by name beyond it, never rounded or passed to Postgres', async () => {
    for (const bad of [String(MAX_OFFSET + 1), '9223372036854775808', '9007199254740993', '1e3', '-1']) {
      const r = await call(api.apiUrl, `/subscribers?offset=${bad}`, t.secret_key);
      expect(r.status, bad).toBe(400);
      expect(r.body).toMatchObject({ error: 'invalid_request', param: 'offset' });
    }
    const ok = await call(api.apiUrl, `/subscribers?offset=${MAX_OFFSET}`, t.secret_key);
    expect(ok.status).toBe(200);
    expect(ok.body.pagination.offset).toBe(MAX_OFFSET);
  });

  it('a body nested 100 000 levels deep is 400 naming the field, not a stack overflow', async () => {
    const depth = 100_000;
    const r = await call(api.apiUrl, '/sync', t.secret_key, {
      method: 'POST',
      body: `{"confirm_count":${'['.repeat(depth)}${']'.repeat(depth)}}`,
    });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ error: 'invalid_request', param: 'confirm_count' });
  });

  it('a repeated query parameter and one named __proto__ are refused by name', async () => {
    const twice = await call(api.apiUrl, '/products?limit=1&limit=2', t.secret_key);
    expect(twice.status).toBe(400);
    expect(twice.body).toMatchObject({ error: 'invalid_request', param: 'limit' });
    // Not swallowed into the prototype slot (where it would pass as "no parameter").
    const proto = await call(api.apiUrl, '/products?__proto__=x', t.secret_key);
    expect(proto.status).toBe(400);
    expect(proto.body).toMatchObject({ error: 'invalid_request', param: '__proto__' });
  });

  it('a path that is not valid percent-encoding is a client error in the Error shape', async () => {
    const r = await call(api.apiUrl, '/products/%E0%A4%A', t.secret_key);
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.status).toBeLessThan(500);
    expect(typeof r.body.error).toBe('string');
  });
});

describe('methods and routes', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let t: Awaited<ReturnType<typeof newTenant>>;
  beforeAll(async () => {
    api = await startApi();
    t = await newTenant('routes');
  });
  afterAll(async () => api.close());

  for (const host of ['apiUrl', 'altUrl'] as const) {
    it(`${host}: the key is checked before the route exists, then 404 not_found`, async () => {
      const anon = await call(api[host], '/no-such-thing');
      expect(anon.status).toBe(401);
      expect(anon.body.error).toBe('invalid_api_key');
      // Same answer as for a route that does exist: nothing is learned about routes.
      const anonReal = await call(api[host], '/products');
      expect(anonReal.body).toEqual(anon.body);
      const authed = await call(api[host], '/no-such-thing', t.secret_key);
      expect(authed.status).toBe(404);
      expect(authed.body.error).toBe('not_found');
    });

    it(`${host}: a method the route does not take is 405 with Allow, in the Error shape`, async () => {
      const anon = await call(api[host], '/products', undefined, { method: 'DELETE' });
      expect(anon.status).toBe(401);
      const r = await call(api[host], '/products', t.secret_key, { method: 'DELETE' });
      expect(r.status).toBe(405);
      expect(r.body.error).toBe('method_not_allowed');
      expect(r.headers.get('allow')).toContain('GET');
    });
  }

  it('TRACE and PROPFIND get the Error shape, never plain text', async () => {
    for (const method of ['TRACE', 'PROPFIND']) {
      const r = await raw(api.apiUrl, [`${method} /v1/products HTTP/1.1`, `Authorization: Bearer ${t.secret_key}`]);
      expect(r.status, method).toBe(405);
      expect(r.headers).toContain('allow: ');
      expect(r.body.error).toBe('method_not_allowed');
      const off = await raw(api.dashboardRoot, [`${method} / HTTP/1.1`]);
      expect(off.status).toBe(404);
      expect(off.body.error).toBe('not_found');
    }
  });

  it('two Authorization headers are a malformed request: 401', async () => {
    const r = await raw(api.apiUrl, [
      'GET /v1/products HTTP/1.1',
      `Authorization: Bearer ${t.secret_key}`,
      `Authorization: Bearer ${t.secret_key}`,
    ]);
    expect(r.status).toBe(401);
    expect(r.body.error).toBe('invalid_api_key');
    expect(r.headers).toContain('www-authenticate: bearer');
  });

  it('an oversized header is 431 in the Error shape', async () => {
    const r = await raw(api.apiUrl, ['GET /v1/products HTTP/1.1', `X-Big: ${'a'.repeat(64 * 1024)}`]);
    expect(r.status).toBe(431);
    expect(r.body.error).toBe('request_header_fields_too_large');
  });
});

describe('a refused request spends nothing', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(async () => api.close());

  it('a tenant header neither takes a rate-limit token nor touches last_used_at', async () => {
    const t = await newTenant('spend');
    const k = await keyWith(t.tenant_id, ['products:read']);
    const bucket = () => testDb()('rate_limit_buckets').where({ tenant_id: t.tenant_id }).first();
    const lastUsed = async () =>
      (await testDb()('api_keys').where({ id: k.key_id }).first('last_used_at')).last_used_at;
    for (const headers of [{ 'x-tenant-id': t.tenant_id }, { tenant: 'x' }] as Record<string, string>[]) {
      const r = await call(api.apiUrl, '/products', k.secret_key, { headers });
      expect(r.status).toBe(400);
    }
    const unknownRoute = await call(api.apiUrl, '/nope', k.secret_key);
    expect(unknownRoute.status).toBe(404);
    expect(await bucket()).toBeUndefined();
    expect(await lastUsed()).toBeNull();
    // The same key admitted once does both: the observations above could have failed.
    expect((await call(api.apiUrl, '/products', k.secret_key)).status).toBe(200);
    expect(Number((await bucket()).tokens)).toBeLessThan(120);
    const deadline = Date.now() + 5000;
    while ((await lastUsed()) === null && Date.now() < deadline) await new Promise((r) => setImmediate(r));
    expect(await lastUsed()).not.toBeNull();
  });
});
