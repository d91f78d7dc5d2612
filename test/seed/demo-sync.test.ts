import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { syncDemoCatalogue } from '../../seed/demo-sync';
import { appDb } from '../helpers/db';
import { makeTenant } from '../helpers/factories';

/**
 * npm start's first sync of the demo catalogue (seed/demo-sync.ts) against an API that is slow to
 * answer, as one is while the worker is still starting on a busy machine: a request that gets no
 * answer in time is tried again within the sync's deadline, never the end of it.
 */
describe("the demo catalogue's first sync", () => {
  let server: http.Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
  });

  /** An API whose n-th GET /v1/sync is answered by `answer(n)` (undefined: never answered). */
  async function api(answer: (n: number) => { status: number; body: unknown } | undefined) {
    const seen: string[] = [];
    server = http.createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      const a = answer(seen.filter((s) => s === 'GET /v1/sync').length);
      if (!a) return; // no answer: the caller's own bound ends the request
      res.writeHead(a.status, { 'content-type': 'application/json' }).end(JSON.stringify(a.body));
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    return { apiRoot: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, seen };
  }

  it('a drift report that does not answer in time is asked again, and the next answer is followed', async () => {
    const t = await makeTenant('demo-sync-slow');
    // The first report hangs past the request's bound; the second says an earlier run holds the drain.
    const { apiRoot, seen } = await api((n) =>
      n === 1 ? undefined : { status: 409, body: { error: 'sync_in_progress', detail: 'a run is draining' } },
    );
    const report = await syncDemoCatalogue({
      db: appDb(),
      tenantId: t.tenant_id,
      apiRoot,
      secretKey: t.secret_key,
      timeoutMs: 4_000,
      callTimeoutMs: 300,
    });
    expect(seen.filter((s) => s === 'GET /v1/sync').length).toBe(2);
    // The second answer was followed (to psp_a having the catalogue, which this tenant never gets).
    expect(report).toEqual({ ok: false, line: expect.stringContaining('another sync run holds the drain') });
  });

  it('an API that never answers is asked until the deadline, and the line says what went unanswered', async () => {
    const t = await makeTenant('demo-sync-silent');
    const { apiRoot, seen } = await api(() => undefined);
    const began = Date.now();
    const report = await syncDemoCatalogue({
      db: appDb(),
      tenantId: t.tenant_id,
      apiRoot,
      secretKey: t.secret_key,
      timeoutMs: 2_500,
      callTimeoutMs: 300,
    });
    expect(Date.now() - began).toBeGreaterThanOrEqual(2_500);
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(report.ok).toBe(false);
    // Each request bounded by its own limit, or by what is left of the deadline when that is shorter.
    expect(report.line).toMatch(/^Demo catalogue sync failed: GET \/v1\/sync: no answer within 0\.[0-3]\d* s;/);
  });

  it('a refusal that time does not mend ends the sync at once, naming it', async () => {
    const t = await makeTenant('demo-sync-refused');
    const { apiRoot, seen } = await api(() => ({ status: 403, body: { error: 'insufficient_scope', detail: 'no' } }));
    const report = await syncDemoCatalogue({ db: appDb(), tenantId: t.tenant_id, apiRoot, secretKey: t.secret_key });
    expect(seen).toEqual(['GET /v1/sync']);
    expect(report.line).toContain('GET /v1/sync answered 403 insufficient_scope: no');
  });
});
