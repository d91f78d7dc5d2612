import crypto from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDb } from '../helpers/db';
import { newTenant, startApi } from '../helpers/api';
import { send, type RawRequest } from './send';

/**
 * The client endpoints under /v1/sdk (publishable keys; not in the management OpenAPI
 * document), fuzzed the same way on both hosts: hostile path ids, query values, bodies and
 * keys. Never a 5xx, always the Error shape on a refusal, and a refusal writes nothing.
 * FUZZ_SDK_RUNS bounds it (default 800); the seed is printed, and FUZZ_SEED replays a run.
 */

const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : crypto.randomInt(2 ** 31);
const RUNS = Number(process.env.FUZZ_SDK_RUNS ?? 800);

const enc = (s: string) => encodeURIComponent(s);
const hostile = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.string({ unit: 'grapheme', maxLength: 12 }),
  fc.constantFrom(
    '',
    '\u0000',
    'a\u0000b',
    '9'.repeat(400),
    '-1',
    '1e999',
    '__proto__',
    'store_android',
    'store_ios',
    'psp_a',
    'premium_monthly',
    'x'.repeat(300),
  ),
);
/** Raw (already encoded) fragments, including ones that are not valid percent-encoding. */
const rawFragment = fc.oneof(hostile.map(enc), fc.constantFrom('%', '%ZZ', '%00', '%E0%A4%A', '..%2F..', '%2F'));
const query = fc
  .array(
    fc.tuple(
      fc.constantFrom(
        'sku',
        'plan_id',
        'provider',
        'app_user_id',
        'email',
        'success_url',
        'mode',
        'limit',
        'x',
        'wait_for',
        'timeout_ms',
      ),
      rawFragment,
    ),
    { maxLength: 4 },
  )
  .map((pairs) => pairs.map(([k, v]) => `${k}=${v}`).join('&'));
const jsonValue = fc.oneof(
  hostile,
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
  fc.array(hostile, { maxLength: 3 }),
);
const purchaseBody = fc.oneof(
  fc
    .record(
      {
        app_user_id: jsonValue,
        provider: fc.oneof(fc.constantFrom('store_android', 'store_ios'), jsonValue),
        product_id: jsonValue,
        purchase_token: jsonValue,
        signed_transaction: fc.oneof(jsonValue, fc.constantFrom('a.b.c', 'eyJ.eyJ.sig', 'a.b')),
      },
      { requiredKeys: [] },
    )
    .map((o) => Buffer.from(JSON.stringify(o))),
  fc
    .record(
      {
        app_user_id: fc.constantFrom('user_1'),
        provider: fc.constantFrom('store_android', 'store_ios'),
        product_id: fc.constant('premium'),
        purchase_token: fc.constant('tok'),
        signed_transaction: fc.constant('a.b.c'),
      },
      { requiredKeys: ['app_user_id', 'provider'] },
    )
    .map((o) => Buffer.from(JSON.stringify(o))),
  fc
    .constantFrom(
      '',
      'null',
      '[]',
      '"x"',
      '{',
      '{"a":',
      '\u0000',
      '{"app_user_id":"\\u0000","provider":"store_android"}',
    )
    .map((s) => Buffer.from(s)),
  fc.integer({ min: 50, max: 3000 }).map((n) => Buffer.from('{"a":'.repeat(n) + '1' + '}'.repeat(n))),
  fc.constantFrom(1, 2).map((mb) => Buffer.alloc(mb * 1024 * 1024, 'a')),
);

type Auth = 'publishable' | 'secret' | 'none' | 'garbage' | 'duplicate';

describe('fuzzing the client endpoints (/v1/sdk)', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let tenant: Awaited<ReturnType<typeof newTenant>>;
  let countSql = '';

  beforeAll(async () => {
    api = await startApi();
    tenant = await newTenant('sdk-fuzz');
    // A request admitted past its key has spent its client tokens (docs/api-conventions.md), so
    // those are not counted; the management bucket is, since a publishable key never touches it.
    const { rows } = await testDb().raw(
      `select table_name from information_schema.columns where table_schema = 'public' and column_name = 'tenant_id' and table_name <> 'client_rate_limit_buckets' and table_name not like 'chart\\_%' order by table_name`,
    );
    countSql = `select ${(rows as { table_name: string }[]).map((r) => `(select count(*)::int from "${r.table_name}" where tenant_id = :t) as "${r.table_name}"`).join(', ')}`;
  });
  afterAll(async () => {
    await api?.close();
  });

  const counts = async (): Promise<Record<string, number>> =>
    (await testDb().raw(countSql, { t: tenant.tenant_id })).rows[0];
  // Client buckets: no row is a full bucket.
  const fillBucket = () => testDb()('client_rate_limit_buckets').where({ tenant_id: tenant.tenant_id }).del();
  const authHeader = (a: Auth): string | string[] | undefined =>
    ({
      publishable: `Bearer ${tenant.publishable_key}`,
      secret: `Bearer ${tenant.secret_key}`,
      none: undefined,
      garbage: `Bearer pk_test_${'z'.repeat(30)}`,
      duplicate: [`Bearer ${tenant.publishable_key}`, `Bearer ${tenant.publishable_key}`],
    })[a];

  it(`never a 5xx, the Error shape on every refusal, nothing written (seed ${SEED})`, async () => {
    console.log(`sdk fuzz seed ${SEED} (${RUNS} runs): replay with FUZZ_SEED=${SEED}`);
    const auth = fc.constantFrom<Auth>(
      'publishable',
      'publishable',
      'publishable',
      'secret',
      'none',
      'garbage',
      'duplicate',
    );
    const host = fc.constantFrom('api', 'alt');
    const cases = fc.oneof(
      fc.record({
        host,
        auth,
        method: fc.constant('GET'),
        path: rawFragment.map((id) => `/v1/sdk/subscribers/${id || 'u'}`),
        q: query,
        body: fc.constant(undefined),
      }),
      fc.record({
        host,
        auth,
        method: fc.constant('GET'),
        path: fc.constantFrom('/v1/sdk/checkout', '/v1/sdk/paywall'),
        q: query,
        body: fc.constant(undefined),
      }),
      fc.record({
        host,
        auth,
        method: fc.constant('POST'),
        path: fc.constant('/v1/sdk/store-purchases'),
        q: fc.constant(''),
        body: purchaseBody,
      }),
      fc.record({
        host,
        auth,
        method: fc.constantFrom('PUT', 'DELETE', 'PATCH', 'TRACE'),
        path: fc.constantFrom('/v1/sdk/store-purchases', '/v1/sdk/subscribers/u', '/v1/sdk/checkout'),
        q: fc.constant(''),
        body: fc.constant(undefined),
      }),
    );
    const seen = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(cases, async (c) => {
        await fillBucket();
        const before = await counts();
        const headers: Record<string, string | string[]> = { 'content-type': 'application/json' };
        const a = authHeader(c.auth);
        if (a !== undefined) headers.authorization = a;
        const req: RawRequest = { method: c.method, path: c.q ? `${c.path}?${c.q}` : c.path, headers, body: c.body };
        const r = await send(c.host === 'api' ? api.apiRoot : api.dashboardRoot, req);
        seen.set(r.status, (seen.get(r.status) ?? 0) + 1);
        const what = `${c.auth} ${req.method} ${req.path.slice(0, 200)} ${c.body ? c.body.subarray(0, 200).toString() : ''} → ${r.status} ${r.text.slice(0, 300)}`;
        expect(r.status, what).toBeLessThan(500);
        if (r.status >= 400) {
          expect(r.headers['content-type'], what).toMatch(/^application\/json/);
          expect(typeof r.body?.error, what).toBe('string');
          // The key is checked before anything else; a good one is never told it is bad.
          if (c.auth !== 'publishable') expect([401, 413, 431], what).toContain(r.status);
          else expect(r.status, what).not.toBe(401);
          if (r.status === 405) expect(r.headers.allow, what).toMatch(/^(GET, HEAD|POST)$/);
          const { audit_entries: _a, ...restBefore } = before;
          const { audit_entries: _b, ...restAfter } = await counts();
          expect(restAfter, `rows written by a refused request: ${what}`).toEqual(restBefore);
        }
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: false },
    );
    console.log('sdk fuzz outcomes (status → count):', Object.fromEntries([...seen.entries()].sort()));
    expect(seen.get(200) ?? 0).toBeGreaterThan(RUNS / 50); // the run reached the endpoints, not only refusals
  }, 600_000);
});
