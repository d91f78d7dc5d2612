import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '../../domain/scopes';
import { touchLastUsed } from '../../api/auth';
import { KEY_COLUMNS, revokeApiKey, type KeyRow } from '../../db/api-keys';
import { testDb } from '../helpers/db';
import { assertMatchesOpenApi, call, keyWith, newTenant, startApi } from '../helpers/api';

describe('authentication', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let t: Awaited<ReturnType<typeof newTenant>>;
  beforeAll(async () => {
    api = await startApi();
    t = await newTenant('auth');
  });
  afterAll(async () => api.close());

  it('missing, malformed, unknown, revoked, expired and publishable keys all get the identical 401', async () => {
    const revoked = await keyWith(t.tenant_id, [...SCOPES]);
    await revokeApiKey(testDb(), revoked.key_id);
    const expired = await keyWith(t.tenant_id, [...SCOPES], { expiresInSeconds: 1 });
    await testDb()('api_keys')
      .where({ id: expired.key_id })
      .update({ expires_at: new Date(Date.now() - 1000) });
    const attempts: Record<string, Record<string, string>> = {
      missing: {},
      'wrong scheme': { authorization: `Basic ${Buffer.from(`${t.secret_key}:`).toString('base64')}` },
      malformed: { authorization: 'Bearer not-a-key' },
      'empty bearer': { authorization: 'Bearer ' },
      unknown: { authorization: `Bearer sk_${'A'.repeat(40)}` },
      revoked: { authorization: `Bearer ${revoked.secret_key}` },
      expired: { authorization: `Bearer ${expired.secret_key}` },
      publishable: { authorization: `Bearer ${t.publishable_key}` },
    };
    for (const base of [api.apiUrl, api.altUrl]) {
      for (const [name, headers] of Object.entries(attempts)) {
        const r = await call(base, '/products', undefined, { headers });
        expect([name, r.status]).toEqual([name, 401]);
        expect(r.body.error).toBe('invalid_api_key');
        expect(r.headers.get('www-authenticate')).toBe('Bearer realm="billing-api"');
        assertMatchesOpenApi('GET', '/products', r);
      }
    }
    const bodies = await Promise.all(
      Object.values(attempts).map((h) => call(api.apiUrl, '/tenant', undefined, { headers: h })),
    );
    expect(new Set(bodies.map((b) => JSON.stringify(b.body))).size).toBe(1);
  });

  it('a key that expires in the future works until then', async () => {
    const k = await keyWith(t.tenant_id, ['tenant:read'], { expiresInSeconds: 3600 });
    const r = await call(api.apiUrl, '/tenant', k.secret_key);
    expect(r.status).toBe(200);
    expect(r.body.key.expires_at).not.toBeNull();
  });

  it('records last use without a write per request', async () => {
    const k = await keyWith(t.tenant_id, ['tenant:read']);
    const lastUsed = async () =>
      (await testDb()('api_keys').where({ id: k.key_id }).first(KEY_COLUMNS.split(', '))) as KeyRow;
    expect((await lastUsed()).last_used_at).toBeNull();
    await call(api.apiUrl, '/tenant', k.secret_key);
    // The api writes it off the request path: observe it land, with a deadline.
    let row = await lastUsed();
    for (const deadline = Date.now() + 5000; !row.last_used_at && Date.now() < deadline; row = await lastUsed()) {
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(row.last_used_at).not.toBeNull();
    // Within the resolution no write is even started (the gate calls the same function)...
    expect(touchLastUsed(testDb(), row)).toBeNull();
    // ...and past it one is, and it lands when awaited.
    const later = new Date(new Date(row.last_used_at!).getTime() + 61_000);
    await touchLastUsed(testDb(), row, later);
    expect((await lastUsed()).last_used_at).toEqual(later);
  });

  it('403 insufficient_scope names the missing scope; the tenant can never be named by the caller', async () => {
    const k = await keyWith(t.tenant_id, ['tenant:read']);
    const r = await call(api.apiUrl, '/products', k.secret_key);
    expect(r.status).toBe(403);
    expect(r.body.error).toBe('insufficient_scope');
    expect(r.body.detail).toContain('products:read');
    assertMatchesOpenApi('GET', '/products', r);

    const other = await newTenant('other');
    const q = await call(api.apiUrl, `/tenant?tenant_id=${other.tenant_id}`, t.secret_key);
    expect(q.status).toBe(400);
    expect(q.body.error).toBe('invalid_request');
    const h = await call(api.apiUrl, '/tenant', t.secret_key, { headers: { 'X-Tenant-Id': other.tenant_id } });
    expect(h.status).toBe(400);
    expect(h.body.detail).toContain('x-tenant-id');
  });

  it('every response carries a Request-Id; errors never carry a stack trace', async () => {
    const r = await call(api.apiUrl, '/nope', t.secret_key);
    expect(r.status).toBe(404);
    expect(r.headers.get('request-id')).toMatch(/^req_/);
    expect(r.body.error).toBe('not_found');
    const ok = await call(api.apiUrl, '/tenant', t.secret_key);
    expect(ok.headers.get('request-id')).toMatch(/^req_/);
    expect(ok.headers.get('request-id')).not.toBe(r.headers.get('request-id'));
  });
});
