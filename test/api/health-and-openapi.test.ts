import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, Connection } from '@temporalio/client';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { OPERATIONS } from '../../operations';
import { MAX_OFFSET } from '../../operations/schemas';
import { createKnex } from '../../db/knex';
import { startAllEmulators } from '../../emulators/registry';
import { call, startApi } from '../helpers/api';
import { until } from '../helpers/until';
import { READINESS_CACHE_MS, readinessDetail } from '../../api/health';
import type { Services } from '../../operations/services';
import { startMetricsServer } from '../../runtime/metrics';

/** The api process's metrics listener (127.0.0.1) with its /readyz, as api/main.ts starts it. */
async function detailListener(services: Services) {
  const server = await startMetricsServer(0, undefined, { '/readyz': readinessDetail(services) });
  return { readyz: () => call(`http://127.0.0.1:${server.port}`, '/readyz'), close: () => server.close() };
}

describe('health', () => {
  it('every listener answers /healthz and /readyz when Postgres and Temporal are up; the checks are named on the metrics listener only', async () => {
    const api = await startApi();
    const detail = await detailListener(api.services);
    try {
      for (const root of [api.apiRoot, api.dashboardRoot, api.toolsUrl]) {
        expect((await call(root, '/healthz')).body).toEqual({ status: 'ok' });
        const ready = await call(root, '/readyz');
        expect(ready.status).toBe(200);
        expect(ready.body).toEqual({ status: 'ready' });
        expect(ready.headers.get('cache-control')).toBe('no-store');
      }
      const d = await detail.readyz();
      expect(d.status).toBe(200);
      expect(d.body).toEqual({ status: 'ready', checks: { postgres: 'ok', temporal: 'ok', outbox: 'ok' } });
    } finally {
      await detail.close();
      await api.close();
    }
  });

  it('the emulators have no /healthz (as the README says): they answer it as their provider would, and /__control/state shows they are up', async () => {
    const emulators = await startAllEmulators(
      { emulatorPorts: {} as never, dataDir: '' },
      { persistent: false, anyPort: true },
    );
    try {
      for (const e of Object.values(emulators)) {
        // Not a health answer: a refusal in the provider's own manner (a 4xx: 404, or 400/403 where the API wants credentials first).
        const r = await fetch(`${e.url}/healthz`);
        expect(r.status >= 400 && r.status < 500, `${e.url} ${r.status}`).toBe(true);
        expect((await fetch(`${e.url}/__control/state`)).status, e.url).toBe(200);
      }
    } finally {
      await Promise.all(Object.values(emulators).map((e) => e.close()));
    }
  });

  it('/readyz is 503 when Temporal is unreachable: the public listeners say only that, the metrics listener names Temporal', async () => {
    const connection = Connection.lazy({ address: '127.0.0.1:1' });
    const api = await startApi({ temporal: { connection, client: new Client({ connection }) } });
    const detail = await detailListener(api.services);
    try {
      for (const root of [api.apiRoot, api.dashboardRoot, api.toolsUrl]) {
        const r = await fetch(`${root}/readyz`);
        expect(r.status).toBe(503);
        // The status word and nothing else: no address, no driver text, no check names.
        expect(await r.text()).toBe('{"status":"unavailable"}');
      }
      const d = await detail.readyz();
      expect(d.status).toBe(503);
      expect(d.body.checks.postgres).toBe('ok');
      expect(d.body.checks.temporal).toMatch(/^unreachable/);
      expect((await call(api.apiRoot, '/healthz')).status).toBe(200);
    } finally {
      await detail.close();
      await api.close();
    }
  });

  it('a flood of /readyz runs one round of backend checks per READINESS_CACHE_MS, not one per request', async () => {
    const api = await startApi();
    // Count the Temporal check (one of the three a round runs).
    let checks = 0;
    const health = api.services.temporal!.connection.healthService;
    const check = health.check.bind(health);
    Object.assign(health, {
      check: (req: Parameters<typeof check>[0]) => {
        checks++;
        return check(req);
      },
    });
    const detail = await detailListener(api.services);
    try {
      const started = Date.now();
      const flood = await Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          fetch(`${[api.apiRoot, api.dashboardRoot, api.toolsUrl][i % 3]}/readyz`).then((r) => r.status),
        ),
      );
      for (let i = 0; i < 20; i++) expect((await fetch(`${api.apiRoot}/readyz`)).status).toBe(200);
      expect((await detail.readyz()).status).toBe(200);
      expect(flood.every((s) => s === 200)).toBe(true);
      // Everything above shared one round (or two, if it straddled the end of the window).
      expect(checks).toBeLessThanOrEqual(Math.ceil((Date.now() - started) / READINESS_CACHE_MS) + 1);
      expect(checks).toBeLessThan(5);
      // Past the window the next call checks again.
      const before = checks;
      // Calls inside the window keep being answered from it; the first one past it checks once.
      await until(
        `a check round after the ${READINESS_CACHE_MS} ms window`,
        async () => (await fetch(`${api.apiRoot}/readyz`), checks),
        (n) => n > before,
        READINESS_CACHE_MS * 5,
      );
      expect(checks).toBe(before + 1);
    } finally {
      await detail.close();
      await api.close();
    }
  });
});

describe('health without Postgres', () => {
  it('/readyz is 503 when Postgres is unreachable (the metrics listener names it); /healthz still answers', async () => {
    const db = createKnex('postgres://nobody@127.0.0.1:1/none', { max: 1 });
    const api = await startApi({ db });
    const detail = await detailListener(api.services);
    try {
      const r = await call(api.dashboardRoot, '/readyz');
      expect(r.status).toBe(503);
      expect(r.body).toEqual({ status: 'unavailable' });
      const d = await detail.readyz();
      expect(d.status).toBe(503);
      expect(d.body.status).toBe('unavailable');
      expect(d.body.checks.postgres).toMatch(/^unreachable/);
      expect(d.body.checks.temporal).toBe('ok');
      expect((await call(api.dashboardRoot, '/healthz')).status).toBe(200);
    } finally {
      await detail.close();
      await api.close();
      await db.destroy();
    }
  });
});

describe('dashboard host front page', () => {
  it('serves an HTML page pointing at the API, OpenAPI and readiness', async () => {
    const api = await startApi();
    try {
      const res = await fetch(`${api.dashboardRoot}/`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/html');
      const html = await res.text();
      for (const href of ['/v1/openapi.json', '/readyz']) expect(html).toContain(`href="${href}"`);
      expect((await fetch(`${api.apiRoot}/`)).status).toBe(404);
    } finally {
      await api.close();
    }
  });
});

describe('tool server listener', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(async () => api.close());
  it('GET / is 405: the server never initiates messages', async () => {
    const r = await call(api.toolsUrl, '/');
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toBe('POST');
  });
});

describe('OpenAPI document', () => {
  it('is served without auth at /v1/openapi.json on both hosts, valid 3.1, one path per REST operation with its scope', async () => {
    const api = await startApi();
    try {
      const a = await call(api.apiUrl, '/openapi.json');
      const b = await call(api.altUrl, '/openapi.json');
      expect(a.status).toBe(200);
      expect(b.body).toEqual(a.body);
      expect(a.body.openapi).toBe('3.1.0');
      for (const op of OPERATIONS.filter((o) => o.rest)) {
        const doc = a.body.paths[op.rest!.path][op.rest!.method.toLowerCase()];
        expect(doc['x-scope']).toBe(op.scope);
        expect(doc.responses['401']).toBeDefined();
        // Every response schema compiles.
        new Ajv2020({ strict: false }).compile(doc.responses['200'].content['application/json'].schema);
      }
      const products = a.body.paths['/products'].get;
      expect(products.parameters.map((p: any) => p.name).sort()).toEqual(['limit', 'offset', 'sku', 'type']);
      // Paging is typed for generated clients: integers with the spec's bounds and defaults, on every list.
      for (const [path, ops] of Object.entries<any>(a.body.paths)) {
        for (const op of Object.values<any>(ops)) {
          const param = (n: string) => op.parameters.find((p: any) => p.name === n)?.schema;
          if (param('limit'))
            expect(param('limit'), path).toMatchObject({ type: 'integer', minimum: 1, maximum: 200, default: 50 });
          if (param('offset'))
            expect(param('offset'), path).toMatchObject({
              type: 'integer',
              minimum: 0,
              maximum: MAX_OFFSET,
              default: 0,
            });
        }
      }
      expect(a.body.paths['/sync/events'].get.parameters.find((p: any) => p.name === 'limit')).toBeDefined();
      // Ids are uuids, in paths and in the rows.
      for (const path of ['/products/{id}', '/products/{id}/sync']) {
        const op = a.body.paths[path].get ?? a.body.paths[path].post;
        expect(op.parameters.find((p: any) => p.name === 'id').schema.format).toBe('uuid');
      }
      expect(a.body.paths['/sync/events'].get.parameters.find((p: any) => p.name === 'run_id').schema.format).toBe(
        'uuid',
      );
      const row = products.responses['200'].content['application/json'].schema.properties.data.items;
      expect(row.properties.id.format).toBe('uuid');
    } finally {
      await api.close();
    }
  });
});
