import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTenant, startApi } from '../helpers/api';
import { send } from '../fuzz/send';

/** Edges the client-endpoint fuzzer found, pinned as plain cases. */
describe('client endpoints: edges', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let t: Awaited<ReturnType<typeof newTenant>>;
  beforeAll(async () => {
    api = await startApi();
    t = await newTenant('sdk-edges');
  });
  afterAll(async () => api?.close());
  const pk = () => ({ authorization: `Bearer ${t.publishable_key}` });

  it('a NUL byte in a query value is a 400 naming it, not a 500', async () => {
    const r = await send(api.apiRoot, { method: 'GET', path: '/v1/sdk/checkout?plan_id=a%00b', headers: pk() });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ error: 'invalid_request', param: 'plan_id' });
  });

  it('two Authorization headers are refused, even when both carry the right key', async () => {
    const r = await send(api.apiRoot, {
      method: 'GET',
      path: '/v1/sdk/subscribers/u1',
      headers: { authorization: [`Bearer ${t.publishable_key}`, `Bearer ${t.publishable_key}`] },
    });
    expect(r.status).toBe(401);
    expect(r.body.error).toBe('invalid_api_key');
  });

  it('with a publishable key: wrong method 405 with Allow, unknown path 404; without one: 401 first; the same on the dashboard host', async () => {
    for (const root of [api.apiRoot, api.dashboardRoot]) {
      const put = await send(root, { method: 'PUT', path: '/v1/sdk/store-purchases', headers: pk() });
      expect(put.status).toBe(405);
      expect(put.headers.allow).toBe('POST');
      expect(put.body.error).toBe('method_not_allowed');
      const nope = await send(root, { method: 'GET', path: '/v1/sdk/nope', headers: pk() });
      expect(nope.status).toBe(404);
      expect(nope.body.error).toBe('not_found');
      const anon = await send(root, { method: 'GET', path: '/v1/sdk/nope', headers: {} });
      expect(anon.status).toBe(401);
      expect(anon.body.detail).toMatch(/publishable key/);
      const read = await send(root, { method: 'GET', path: '/v1/sdk/subscribers/u1', headers: pk() });
      expect(read.status).toBe(200);
    }
  });
});
