import crypto from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTenant } from '../../db/tenant-tx';
import { testDb } from '../helpers/db';
import { assertMatchesOpenApi, newTenant, startApi } from '../helpers/api';
import { startTestWorker } from '../helpers/temporal';
import {
  auth,
  bodyFor,
  deepBody,
  extras,
  operationsOf,
  pathId,
  queryParts,
  sizedBody,
  type Auth,
  type DocOp,
} from './model';
import { expected, idOf, idParamOf, type Case } from './oracle';
import { send, type RawRequest } from './send';

/**
 * Property-based fuzzing of /v1 from its own OpenAPI document, on both hosts that serve it
 * (the API port and the dashboard host). For every generated request:
 *   - never a 5xx;
 *   - every refusal in the Error shape, and every answer of a documented operation matches
 *     the document for its status;
 *   - the documented status for the case (with `param` naming the parameter at fault, `Allow`
 *     on a 405);
 *   - a refused request writes nothing: the tenant's row count in every table is unchanged
 *     (a refused write adds exactly its audit row), and a request refused at the gate does
 *     not touch the rate-limit bucket.
 * Bounded by FUZZ_RUNS (default 2000, about 45 s); the seed is printed, and FUZZ_SEED replays a run.
 */

const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : crypto.randomInt(2 ** 31);
const RUNS = Number(process.env.FUZZ_RUNS ?? 2000);
const FOREIGN_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'TRACE', 'PROPFIND', 'OPTIONS'];
const UNKNOWN_PATHS = [
  '/v1/nope',
  '/v1/products/x/y',
  '/v1/',
  '/v1/openapi.json/x',
  '/v1/sync/events/1',
  '/v1/%00',
  '/v1/products/%ZZ/sync/x',
  '/v1/tenant/..%2F..',
];

describe('fuzzing /v1 from its OpenAPI document', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let tenant: Awaited<ReturnType<typeof newTenant>>;
  let ops: DocOp[];
  const ids = { own: '', other: '', random: crypto.randomUUID() };
  let countSql = '';
  let countArgs: string[] = [];

  beforeAll(async () => {
    worker = await startTestWorker();
    api = await startApi({ config: { ...worker.config } });
    tenant = await newTenant('fuzz');
    const other = await newTenant('fuzz-other');
    const product = (tenantId: string) =>
      withTenant(testDb(), tenantId, async (trx) => {
        const [p] = await trx('products')
          .insert({ tenant_id: tenantId, sku: 'fuzz_monthly', name: 'Fuzz', tier: 'monthly' })
          .returning('id');
        await trx('prices').insert({
          tenant_id: tenantId,
          product_id: p.id,
          country: 'US',
          currency: 'USD',
          amount_minor: 999,
        });
        return p.id as string;
      });
    ids.own = await product(tenant.tenant_id);
    ids.other = await product(other.tenant_id);
    const doc = await (await fetch(`${api.apiUrl}/openapi.json`)).json();
    ops = operationsOf(doc);
    // Every table, counted for this tenant (tables without a tenant column are global ones
    // other test files may write to at the same time; tenants is counted by id).
    const { rows } = await testDb().raw(
      `select c.table_name, bool_or(c.column_name = 'tenant_id') as scoped
         from information_schema.columns c join information_schema.tables t using (table_schema, table_name)
        where c.table_schema = 'public' and t.table_type = 'BASE TABLE' group by c.table_name order by c.table_name`,
    );
    const counted = (rows as { table_name: string; scoped: boolean }[]).filter(
      // The chart sums are the worker's fold job's, written in the background whatever a call does.
      (r) => (r.scoped && !r.table_name.startsWith('chart_')) || r.table_name === 'tenants',
    );
    expect(counted.length).toBeGreaterThan(15);
    countSql = `select ${counted
      .map(
        (r) =>
          `(select count(*)::int from "${r.table_name}" where ${r.scoped ? 'tenant_id' : 'id'} = ?) as "${r.table_name}"`,
      )
      .join(', ')}`;
    countArgs = counted.map(() => tenant.tenant_id);
  });
  afterAll(async () => {
    await api?.close();
    await worker?.stop();
  });

  const counts = async (): Promise<Record<string, number>> => (await testDb().raw(countSql, countArgs)).rows[0];
  /** A full bucket before each case, so the fuzzer measures behaviour, not the rate limit. */
  const fillBucket = async () =>
    (
      await testDb().raw(
        `insert into rate_limit_buckets (tenant_id, tokens, refreshed_at) values (?, 120, clock_timestamp())
         on conflict (tenant_id) do update set tokens = 120, refreshed_at = clock_timestamp() returning tokens, refreshed_at`,
        [tenant.tenant_id],
      )
    ).rows[0];
  const bucket = async () =>
    testDb()('rate_limit_buckets').where({ tenant_id: tenant.tenant_id }).first('tokens', 'refreshed_at');

  function authHeader(a: Auth): string | string[] | undefined {
    const key = tenant.secret_key;
    switch (a) {
      case 'valid':
        return `Bearer ${key}`;
      case 'valid-lowercase':
        return `bearer   ${key}`;
      case 'none':
        return undefined;
      case 'basic':
        return `Basic ${Buffer.from('a:b').toString('base64')}`;
      case 'bearer-empty':
        return 'Bearer ';
      case 'publishable':
        return `Bearer ${tenant.publishable_key}`;
      case 'unknown-sk':
        return `Bearer sk_${crypto.randomBytes(24).toString('hex')}`;
      case 'duplicate':
        return [`Bearer ${key}`, `Bearer ${key}`];
      case 'trailing-junk':
        return `Bearer ${key} junk`;
    }
  }

  function requestOf(c: Case): { base: string; req: RawRequest } {
    const base = c.host === 'api' ? api.apiRoot : api.dashboardRoot;
    const headers: Record<string, string | string[]> = {};
    const a = authHeader(c.auth);
    if (a !== undefined) headers.authorization = a;
    if (c.extras.tenantHeader) headers[c.extras.tenantHeader] = tenant.tenant_id;
    if (c.extras.prefer) headers.prefer = c.extras.prefer;
    if (c.extras.bigHeader) headers['x-big'] = 'a'.repeat(20 * 1024);
    headers['content-type'] = c.extras.contentType ?? 'application/json';
    if (c.kind === 'unknown') return { base, req: { method: c.method, path: c.path, headers } };
    const path =
      '/v1' +
      c.op.path
        .replace(`{${idParamOf(c.op.path)}}`, c.kind === 'op' && c.id ? idOf(c.id, ids) : ids.own)
        .replace(/\{[^}]+\}/g, 'fuzz_user');
    if (c.kind === 'method') return { base, req: { method: c.method, path, headers } };
    const query = c.query.map(([n, v]) => `${n}=${v}`).join('&');
    const req: RawRequest = { method: c.op.method, path: query ? `${path}?${query}` : path, headers };
    const b = c.body;
    if (b.kind === 'json') req.body = Buffer.from(JSON.stringify(b.value), 'utf8');
    else if (b.kind === 'raw') req.body = b.bytes;
    else if (b.kind === 'deep') req.body = deepBody(b, Object.keys(c.op.body?.properties ?? {})[0]);
    else if (b.kind === 'size') {
      req.body = sizedBody(b);
      req.chunked = b.chunked;
    }
    return { base, req };
  }

  const describeCase = (c: Case) =>
    JSON.stringify(c, (k, v) =>
      k === 'op'
        ? `${v.method} ${v.path}`
        : v instanceof Buffer || (v && v.type === 'Buffer')
          ? `<${v.length ?? v.data?.length} bytes>`
          : v,
    );

  it(`never a 5xx, always the Error shape and the documented status, nothing written when refused (seed ${SEED})`, async () => {
    console.log(`fuzz seed ${SEED} (${RUNS} runs): replay with FUZZ_SEED=${SEED}`);
    const host = fc.constantFrom<'api' | 'alt'>('api', 'alt');
    const opCase = fc.constantFrom(...ops).chain((op) =>
      fc.record({
        kind: fc.constant('op' as const),
        host,
        op: fc.constant(op),
        auth,
        extras,
        query: queryParts(op),
        id: op.params.some((p) => p.in === 'path') ? pathId : fc.constant(undefined),
        body: op.method === 'GET' ? fc.constant({ kind: 'none' as const }) : bodyFor(op),
      }),
    );
    const methodCase = fc.constantFrom(...ops).chain((op) => {
      const documented = ops.filter((o) => o.path === op.path).map((o) => o.method);
      const foreign = FOREIGN_METHODS.filter(
        (m) => !documented.includes(m) && !(m === 'HEAD' && documented.includes('GET')),
      );
      return fc.record({
        kind: fc.constant('method' as const),
        host,
        op: fc.constant(op),
        method: fc.constantFrom(...foreign),
        auth,
        extras,
      });
    });
    const unknownCase = fc.record({
      kind: fc.constant('unknown' as const),
      host,
      path: fc.constantFrom(...UNKNOWN_PATHS),
      method: fc.constantFrom('GET', 'POST', 'DELETE', 'TRACE'),
      auth,
      extras,
    });
    const anyCase: fc.Arbitrary<Case> = fc.oneof(
      { weight: 12, arbitrary: opCase },
      { weight: 1, arbitrary: methodCase },
      { weight: 1, arbitrary: unknownCase },
    );

    const seen = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(anyCase, async (c) => {
        const exp = expected(c, ids);
        const filled = await fillBucket();
        const before = await counts();
        const { base, req } = requestOf(c);
        const r = await send(base, req);
        const what = `${req.method} ${req.path.slice(0, 200)} → ${r.status} ${r.text.slice(0, 300)}\ncase ${describeCase(c).slice(0, 1500)}`;
        seen.set(`${c.kind}:${r.status}`, (seen.get(`${c.kind}:${r.status}`) ?? 0) + 1);

        expect(r.status, what).toBeLessThan(500);
        expect(exp.status, what).toContain(r.status);
        if (r.status >= 400) {
          expect(r.headers['content-type'], what).toMatch(/^application\/json/);
          expect(typeof r.body?.error, what).toBe('string');
          if (r.body.detail !== undefined) expect(typeof r.body.detail, what).toBe('string');
          if (exp.error) expect(exp.error, what).toContain(r.body.error);
          if (exp.param?.required) expect(r.body.param, what).toBeDefined();
          // A nested fault is named by its path (`event_types.0`); the oracle knows the top-level field.
          if (r.body.param !== undefined) {
            const names = [...(exp.param?.names ?? [])];
            const param = String(r.body.param);
            expect(names, what).toContain(names.includes(param) ? param : param.split('.')[0]);
          }
        }
        if (r.status === 405) expect(r.headers.allow, what).toBe(allowed(c));
        if (r.status === 401) expect(r.headers['www-authenticate'], what).toMatch(/^Bearer realm=/);
        if (c.kind === 'op') {
          // A documented operation answers only what its document lists (431 is parse-level, before any route).
          if (r.status !== 431) expect(c.op.responses, what).toContain(r.status);
          if (r.status !== 431)
            assertMatchesOpenApi(c.op.method, c.op.path, { status: r.status, headers: new Headers(), body: r.body });
        }

        if (r.status >= 400) {
          const after = await counts();
          const { audit_entries: auditBefore, ...restBefore } = before;
          const { audit_entries: auditAfter, ...restAfter } = after;
          expect(restAfter, `rows written by a refused request: ${what}`).toEqual(restBefore);
          expect(auditAfter - auditBefore, `audit rows: ${what}`).toBe(exp.audited ? 1 : 0);
          if (exp.audited) {
            const last = await testDb()('audit_entries')
              .where({ tenant_id: tenant.tenant_id })
              .orderBy('created_at', 'desc')
              .first('outcome');
            expect(last.outcome, what).toBe(r.body.error);
          }
          if (exp.gate) expect(await bucket(), `gate refusal touched the bucket: ${what}`).toEqual(filled);
        }
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: false },
    );
    console.log('fuzz outcomes (kind:status → count):', Object.fromEntries([...seen.entries()].sort()));
    // The run reached the operations, not only the refusals.
    expect(seen.get('op:200') ?? 0).toBeGreaterThan(RUNS / 20);
  }, 600_000);

  function allowed(c: Case): string {
    const path = c.kind === 'unknown' ? '' : c.op.path;
    const methods = new Set(ops.filter((o) => o.path === path).map((o) => o.method));
    if (methods.has('GET')) methods.add('HEAD');
    return [...methods].sort().join(', ');
  }
});
