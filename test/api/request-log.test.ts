import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { call, newTenant, startApi } from '../helpers/api';
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
      expect(okLine).toMatchObject({ msg: 'request', method: 'GET', path: '/v1/products', status: 200, tenant_id: t.tenant_id });
      expect(okLine.key_id).toMatch(/^[0-9a-f-]{36}$/);
      const deniedLine = parsed.find((l) => l.request_id === denied.headers.get('request-id'));
      expect(deniedLine).toMatchObject({ status: 401 });
      expect(lines.join('\n')).not.toContain(t.secret_key);
    } finally {
      await api.close();
    }
  });

  it('request ids stay unique and well-formed across refills of their random pool', () => {
    const ids = Array.from({ length: 2000 }, newRequestId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^req_[A-Za-z0-9_-]{16}$/);
  });
});
