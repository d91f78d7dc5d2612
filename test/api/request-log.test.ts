import crypto from 'node:crypto';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { call, newTenant, startApi } from '../helpers/api';
import { startApiProcess } from '../helpers/api-process';
import { until } from '../helpers/until';
import { newRequestId } from '../../api/middleware';

describe('request log', () => {
  it('every request is one JSON log line carrying the Request-Id of the response, tenant and key, never the key itself', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(...String(chunk).split('\n').filter(Boolean));
        cb();
      },
    });
    const api = await startApi({}, sink);
    try {
      const t = await newTenant('logs');
      const ok = await call(api.apiUrl, '/products', t.secret_key);
      const denied = await call(api.altUrl, '/products', 'sk_' + 'x'.repeat(40));
      await new Promise((r) => setTimeout(r, 50));
      const parsed = lines.map((l) => JSON.parse(l));
      const okLine = parsed.find((l) => l.request_id === ok.headers.get('request-id'));
      expect(okLine).toMatchObject({
        msg: 'request',
        method: 'GET',
        route: '/v1/products',
        status: 200,
        tenant_id: t.tenant_id,
      });
      expect(okLine.key_id).toMatch(/^[0-9a-f-]{36}$/);
      const deniedLine = parsed.find((l) => l.request_id === denied.headers.get('request-id'));
      expect(deniedLine).toMatchObject({ status: 401 });
      expect(lines.join('\n')).not.toContain(t.secret_key);
    } finally {
      await api.close();
    }
  });

  it("names the route template, never the path: an app user id (often an email) or an id in the path stays out of the api process's log", async () => {
    const api = await startApiProcess({ LOG_LEVEL: 'info' });
    try {
      const t = await newTenant('log-routes');
      const root = `http://127.0.0.1:${api.apiPort}`;
      const dashboard = `http://127.0.0.1:${api.dashboardPort}`;
      const email = `jane.doe+${crypto.randomBytes(4).toString('hex')}@example.com`;
      const productId = crypto.randomUUID();
      const asked = [
        // The premium check, with the id as apps send it (encoded) and raw.
        [
          await call(root, `/v1/sdk/subscribers/${encodeURIComponent(email)}`, t.publishable_key),
          '/v1/sdk/subscribers/:appUserId',
          200,
        ],
        [
          await fetch(`${root}/v1/sdk/subscribers/${email}`, {
            headers: { authorization: `Bearer ${t.publishable_key}` },
          }),
          '/v1/sdk/subscribers/:appUserId',
          200,
        ],
        // Refused before the id is read: still the template.
        [await call(root, `/v1/sdk/subscribers/${encodeURIComponent(email)}`), '/v1/sdk/subscribers/:appUserId', 401],
        [await call(`${root}/v1`, `/products/${productId}`, t.secret_key), '/v1/products/:id', 404],
        // A path no route takes is whatever the client sent: not logged at all.
        [await call(root, `/v1/sdk/subscriber/${encodeURIComponent(email)}`, t.publishable_key), '(unmatched)', 404],
        [
          await call(dashboard, `/api/webhooks/${encodeURIComponent(email)}`, undefined, {
            method: 'POST',
            body: '{}',
          }),
          '/api/webhooks/:provider',
          404,
        ],
      ] as const;
      const lines = await until(
        'a request line for each',
        async () =>
          api
            .stdout()
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l))
            .filter((l) => l.msg === 'request'),
        (ls) => asked.every(([r]) => ls.some((l) => l.request_id === r.headers.get('request-id'))),
      );
      for (const [r, route, status] of asked) {
        expect(r.status).toBe(status);
        expect(lines.find((l) => l.request_id === r.headers.get('request-id'))).toMatchObject({ route, status });
      }
      const out = api.stdout();
      for (const secret of [email, encodeURIComponent(email), 'jane.doe', productId]) expect(out).not.toContain(secret);
      expect(lines.every((l) => l.path === undefined)).toBe(true);
    } finally {
      await api.stop();
    }
  });

  it('request ids stay unique and well-formed across refills of their random pool', () => {
    const ids = Array.from({ length: 2000 }, newRequestId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^req_[A-Za-z0-9_-]{16}$/);
  });
});
