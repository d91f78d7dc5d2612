import Koa from 'koa';
import Router from '@koa/router';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorHandler, requestContext } from '../../api/middleware';
import { restRouter } from '../../api/rest';
import { defineOperation, type Operation } from '../../operations/types';
import { createLogger } from '../../runtime/logger';
import { ConfigError } from '../../runtime/config';
import { call, keyWith, listen, newTenant, startApi, testServices } from '../helpers/api';

/**
 * The audit and body rules are part of the operation table, so every write operation gets
 * them. These tests mount a write operation through the same restRouter the app uses.
 */
const noteOp = defineOperation({
  name: 'test.note',
  summary: 'a write used to exercise the write path',
  scope: 'products:write',
  write: true,
  input: z
    .object({
      text: z.string().min(1),
      nested: z.record(z.string(), z.unknown()).optional(),
      fail: z.boolean().optional(),
      misconfigured: z.boolean().optional(),
    })
    .strict(),
  output: z.object({ id: z.string() }),
  rest: { method: 'POST', path: '/notes' },
  async handler(ctx, input) {
    return ctx.tx(async (trx) => {
      const [row] = await trx('coupons')
        .insert({ tenant_id: ctx.tenantId, code: `NOTE-${input.text}` })
        .returning('id');
      if (input.fail) throw new Error('handler exploded after writing');
      if (input.misconfigured) throw new ConfigError('PSP_A_API_BASE', 'PSP_A_API_BASE is not a URL');
      return { id: row.id };
    });
  },
});

describe('write path: audit, forbidden fields, malformed bodies, size limit', () => {
  let srv: Awaited<ReturnType<typeof listen>>;
  let api: Awaited<ReturnType<typeof startApi>>;
  let t: Awaited<ReturnType<typeof newTenant>>;
  beforeAll(async () => {
    const services = testServices();
    const app = new Koa();
    app.use(requestContext(createLogger('silent')));
    app.use(errorHandler());
    const v1 = new Router({ prefix: '/v1' });
    const r = restRouter([noteOp as unknown as Operation], services);
    v1.use(r.routes());
    app.use(v1.routes());
    srv = await listen(app);
    api = await startApi();
    t = await newTenant('writes');
  });
  afterAll(async () => {
    await srv.close();
    await api.close();
  });
  const post = (body: string, key = t.secret_key, headers: Record<string, string> = {}) =>
    call(`${srv.url}/v1`, '/notes', key, { method: 'POST', body, headers });

  it('a successful write is audited with actor_type api_key, the key id and the request id', async () => {
    const r = await post(JSON.stringify({ text: 'ok' }));
    expect(r.status).toBe(200);
    const audit = await call(api.apiUrl, '/audit?action=test.note', t.secret_key);
    const row = audit.body.data.find((a: any) => a.request_id === r.headers.get('request-id'));
    expect(row).toMatchObject({ action: 'test.note', actor_type: 'api_key', outcome: 'ok' });
    const keyId = (await call(api.apiUrl, '/tenant', t.secret_key)).body.key.id;
    expect(row.key_id).toBe(keyId);
    expect(row.actor_id).toBe(keyId);
  });

  it('refused writes are audited too, and leave nothing behind', async () => {
    const readOnly = await keyWith(t.tenant_id, ['products:read', 'audit:read']);
    const refused = await post(JSON.stringify({ text: 'nope' }), readOnly.secret_key);
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toContain('products:write');
    const failed = await post(JSON.stringify({ text: 'boom', fail: true }));
    expect(failed.status).toBe(500);
    expect(failed.body).toMatchObject({ error: 'server_misconfigured' });
    expect(JSON.stringify(failed.body)).not.toMatch(/exploded|at .*\.ts/);
    const audit = await call(api.apiUrl, '/audit?action=test.note&actor_type=api_key', t.secret_key);
    const outcomes = Object.fromEntries(audit.body.data.map((a: any) => [a.request_id, a.outcome]));
    expect(outcomes[refused.headers.get('request-id')!]).toBe('insufficient_scope');
    expect(outcomes[failed.headers.get('request-id')!]).toBe(failed.body.error); // the audit row records the code the caller got
    const coupons = await call(api.apiUrl, '/coupons', t.secret_key);
    const codes = coupons.body.data.map((c: any) => c.code);
    expect(codes).toContain('NOTE-ok');
    expect(codes).not.toContain('NOTE-nope');
    expect(codes).not.toContain('NOTE-boom'); // rolled back with the failed handler
  });

  it('a server-side misconfiguration is 500 server_misconfigured naming the variable, nothing more', async () => {
    const r = await post(JSON.stringify({ text: 'cfg', misconfigured: true }));
    expect(r.status).toBe(500);
    expect(r.body).toEqual({
      error: 'server_misconfigured',
      detail: 'Server-side failure: PSP_A_API_BASE is misconfigured.',
    });
  });

  it('reads are not audited', async () => {
    const fresh = await newTenant('reads-only');
    for (const p of ['/tenant', '/products', '/subscribers', '/audit'])
      expect((await call(api.apiUrl, p, fresh.secret_key)).status).toBe(200);
    const audit = await call(api.apiUrl, '/audit?actor_type=api_key', fresh.secret_key);
    expect(audit.body.pagination.total).toBe(0);
  });

  it('a body key containing secret, api_key or credential, at any depth and any case, is 400 forbidden_field', async () => {
    for (const body of [
      { text: 'x', webhook_secret: 'whsec_123' },
      { text: 'x', nested: { Stripe_API_KEY: 'sk_live_1' } },
      { text: 'x', nested: { list: [{ credentials: { a: 1 } }] } },
    ]) {
      const r = await post(JSON.stringify(body));
      expect(r.status).toBe(400);
      expect(r.body.error).toBe('forbidden_field');
      expect(JSON.stringify(r.body)).not.toMatch(/whsec_123|sk_live_1/);
    }
    const coupons = await call(api.apiUrl, '/coupons?code=NOTE-x', t.secret_key);
    expect(coupons.body.data).toHaveLength(0);
  });

  it('malformed JSON, a non-object body, unknown fields → 400 invalid_request; oversized → 413', async () => {
    for (const body of [
      '{"text": ',
      '[1,2]',
      '"text"',
      JSON.stringify({ text: 'x', tenant_id: t.tenant_id }),
      JSON.stringify({ text: 'x', colour: 1 }),
    ]) {
      const r = await post(body);
      expect([body, r.status, r.body.error]).toEqual([body, 400, 'invalid_request']);
    }
    const big = await post(JSON.stringify({ text: 'x'.repeat(2 * 1024 * 1024) }));
    expect(big.status).toBe(413);
  });
});
