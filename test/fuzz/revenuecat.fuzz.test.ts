import crypto from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertRevenueCatKey } from '../../db/revenuecat';
import { publishDraft, saveDraft } from '../../db/paywalls';
import { withTenant } from '../../db/tenant-tx';
import { RC_ERROR } from '../../domain/revenuecat';
import { newTenant, startApi } from '../helpers/api';
import { testDb } from '../helpers/db';
import { makeEntitlement, makeProduct } from '../helpers/factories';
import { send, type RawRequest } from './send';

/**
 * RevenueCat's client API under /revenuecat (docs/revenuecat-compatibility.md), fuzzed as
 * /v1/sdk is (test/fuzz/sdk.fuzz.test.ts): hostile ids, query values, bodies, headers and keys.
 * Never a 5xx; every refusal in RevenueCat's shape; a secret or publishable key is refused (401,
 * 7225); a key of tenant B never reads or writes tenant A (A's product and entitlement never
 * appear in B's answers, A's rows never change under B's key); a refused request writes nothing.
 * FUZZ_RC_RUNS bounds it (default 300); the seed is printed, and FUZZ_SEED replays a run.
 */

const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : crypto.randomInt(2 ** 31);
const RUNS = Number(process.env.FUZZ_RC_RUNS ?? 300);

const enc = (s: string) => encodeURIComponent(s);
const hostile = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.string({ unit: 'grapheme', maxLength: 12 }),
  fc.constantFrom(
    '',
    '\u0000',
    'a\u0000b',
    '$RCAnonymousID:0123456789abcdef0123456789abcdef',
    '$RCAnonymousID:',
    '9'.repeat(400),
    '__proto__',
    'identify',
    'a_user',
    'x'.repeat(300),
  ),
);
const rawFragment = fc.oneof(hostile.map(enc), fc.constantFrom('%', '%ZZ', '%00', '%E0%A4%A', '..%2F..', '%2F'));
const query = fc
  .array(fc.tuple(fc.constantFrom('id', 'currency', 'platform', 'x'), rawFragment), { maxLength: 4 })
  .map((pairs) => pairs.map(([k, v]) => `${k}=${v}`).join('&'));
const jsonValue = fc.oneof(
  hostile,
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
  fc.array(hostile, { maxLength: 3 }),
  fc.dictionary(hostile, hostile, { maxKeys: 3 }),
);
const json = (o: unknown) => Buffer.from(JSON.stringify(o));
const body = fc.oneof(
  // receipts
  fc
    .record(
      {
        app_user_id: jsonValue,
        fetch_token: fc.oneof(jsonValue, fc.constantFrom('a.b.c', 'eyJ.eyJ.sig', 'MIIT')),
        product_ids: jsonValue,
        is_restore: jsonValue,
        attributes: jsonValue,
      },
      { requiredKeys: [] },
    )
    .map(json),
  // identify
  fc.record({ app_user_id: jsonValue, new_app_user_id: jsonValue }, { requiredKeys: [] }).map(json),
  // attributes
  fc
    .record(
      {
        attributes: fc.oneof(
          jsonValue,
          fc.dictionary(
            hostile,
            fc.record({ value: jsonValue, updated_at_ms: fc.oneof(fc.integer(), jsonValue) }, { requiredKeys: [] }),
            { maxKeys: 4 },
          ),
        ),
      },
      { requiredKeys: [] },
    )
    .map(json),
  fc.constantFrom('', 'null', '[]', '"x"', '{', '{"a":', '\u0000').map((s) => Buffer.from(s)),
  fc.integer({ min: 50, max: 2000 }).map((n) => Buffer.from('{"a":'.repeat(n) + '1' + '}'.repeat(n))),
  fc.constant(Buffer.alloc(1024 * 1024 + 10, 'a')),
);

type Auth = 'a_web' | 'a_ios' | 'a_android' | 'b_web' | 'secret' | 'publishable' | 'none' | 'garbage' | 'duplicate';

describe('fuzzing RevenueCat’s client API (/revenuecat)', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let a: Awaited<ReturnType<typeof newTenant>>;
  let b: Awaited<ReturnType<typeof newTenant>>;
  const keys = {} as Record<'a_web' | 'a_ios' | 'a_android' | 'b_web', string>;
  /** What only tenant A holds: the fuzz looks for it in every answer B's key gets. */
  const aSku = `a_only_${crypto.randomBytes(4).toString('hex')}`;
  const aEntitlement = `ent_${crypto.randomBytes(4).toString('hex')}`;
  let countSql = '';

  beforeAll(async () => {
    api = await startApi();
    [a, b] = [await newTenant('rc-fuzz-a'), await newTenant('rc-fuzz-b')];
    const mint = (t: string, platform: 'web' | 'ios' | 'android') =>
      withTenant(testDb(), t, (trx) => insertRevenueCatKey(trx, { tenantId: t, platform, mode: 'test' }));
    keys.a_web = (await mint(a.tenant_id, 'web')).public_key;
    keys.a_ios = (await mint(a.tenant_id, 'ios')).public_key;
    keys.a_android = (await mint(a.tenant_id, 'android')).public_key;
    keys.b_web = (await mint(b.tenant_id, 'web')).public_key;
    const product = await makeProduct(a.tenant_id, {
      sku: aSku,
      tier: 'monthly',
      prices: [{ country: 'US', currency: 'USD', amount: 999 }],
    });
    await withTenant(testDb(), a.tenant_id, async (trx) => {
      await trx('products').where({ id: product.id }).update({ entitlement: aEntitlement });
      await saveDraft(trx, a.tenant_id, { title: 'A', skus: [aSku] });
      await publishDraft(trx);
    });
    await makeEntitlement(a.tenant_id, { appUserId: 'a_user', provider: 'psp_a', productId: product.id });
    // Client buckets and the audit trail change on admitted requests by design; everything else is counted.
    const { rows } = await testDb().raw(
      `select table_name from information_schema.columns where table_schema = 'public' and column_name = 'tenant_id' and table_name not in ('client_rate_limit_buckets', 'audit_entries') and table_name not like 'chart\\_%' order by table_name`,
    );
    countSql = `select ${(rows as { table_name: string }[]).map((r) => `(select count(*)::int from "${r.table_name}" where tenant_id = :t) as "${r.table_name}"`).join(', ')}`;
  });
  afterAll(async () => {
    await api?.close();
  });

  const counts = async (tenantId: string): Promise<Record<string, number>> =>
    (await testDb().raw(countSql, { t: tenantId })).rows[0];
  const fillBuckets = () =>
    testDb()('client_rate_limit_buckets').whereIn('tenant_id', [a.tenant_id, b.tenant_id]).del();
  const authHeader = (x: Auth): string | string[] | undefined => {
    if (x in keys) return `Bearer ${keys[x as keyof typeof keys]}`;
    return {
      secret: `Bearer ${a.secret_key}`,
      publishable: `Bearer ${a.publishable_key}`,
      none: undefined,
      garbage: `Bearer rcb_sb_${'z'.repeat(30)}`,
      duplicate: [`Bearer ${keys.a_web}`, `Bearer ${keys.a_web}`],
    }[x as 'secret'];
  };

  it(`never a 5xx, RevenueCat's shape on every refusal, no key of B reads A, nothing written by a refusal (seed ${SEED})`, async () => {
    console.log(`revenuecat fuzz seed ${SEED} (${RUNS} runs): replay with FUZZ_SEED=${SEED}`);
    const auth = fc.constantFrom<Auth>(
      'a_web',
      'a_web',
      'a_ios',
      'a_android',
      'b_web',
      'b_web',
      'secret',
      'publishable',
      'none',
      'garbage',
      'duplicate',
    );
    const id = fc.oneof(
      fc.constant('a_user'),
      rawFragment.map((x) => x || 'u'),
    );
    const headers = fc.record(
      {
        'x-platform': fc.oneof(fc.constantFrom('iOS', 'android', 'web', 'stripe'), hostile.map(enc)),
        'x-is-sandbox': fc.oneof(fc.constantFrom('true', 'false'), hostile.map(enc)),
        'x-version': hostile.map(enc),
      },
      { requiredKeys: [] },
    );
    const cases = fc.oneof(
      fc.record({
        auth,
        headers,
        method: fc.constant('GET'),
        path: fc.tuple(id, fc.constantFrom('', '/offerings')).map(([u, tail]) => `/v1/subscribers/${u}${tail}`),
        q: query,
        body: fc.constant(undefined),
      }),
      fc.record({
        auth,
        headers,
        method: fc.constant('GET'),
        path: id.map((u) => `/rcbilling/v1/subscribers/${u}/products`),
        q: fc.oneof(query, fc.constant(`id=${aSku}&currency=USD`)),
        body: fc.constant(undefined),
      }),
      fc.record({
        auth,
        headers,
        method: fc.constant('POST'),
        path: fc.oneof(
          fc.constantFrom('/v1/receipts', '/v1/subscribers/identify'),
          id.map((u) => `/v1/subscribers/${u}/attributes`),
        ),
        q: fc.constant(''),
        body,
      }),
      fc.record({
        auth,
        headers,
        method: fc.constantFrom('PUT', 'DELETE', 'PATCH', 'TRACE', 'GET', 'POST'),
        path: fc.oneof(
          fc.constantFrom('/v1/receipts', '/v1/subscribers', '/', '/v1/subscribers/a_user/offerings/x', '/v2/projects'),
          rawFragment.map((x) => `/v1/${x}`),
        ),
        q: fc.constant(''),
        body: fc.constant(undefined),
      }),
    );
    const seen = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(cases, async (c) => {
        await fillBuckets();
        const [beforeA, beforeB] = [await counts(a.tenant_id), await counts(b.tenant_id)];
        const h: Record<string, string | string[]> = { 'content-type': 'application/json', ...c.headers };
        const key = authHeader(c.auth);
        if (key !== undefined) h.authorization = key;
        const req: RawRequest = {
          method: c.method,
          path: `/revenuecat${c.path}${c.q ? `?${c.q}` : ''}`,
          headers: h,
          body: c.body,
        };
        const r = await send(api.apiRoot, req);
        seen.set(r.status, (seen.get(r.status) ?? 0) + 1);
        const what = `${c.auth} ${req.method} ${req.path.slice(0, 200)} ${c.body ? c.body.subarray(0, 200).toString() : ''} → ${r.status} ${r.text.slice(0, 300)}`;
        expect(r.status, what).toBeLessThan(500);
        const keyed = c.auth.startsWith('a_') || c.auth === 'b_web';
        if (!keyed) expect([r.status, r.body?.code], what).toEqual([401, RC_ERROR.invalidApiKey]);
        else if (r.status !== 413 && r.status !== 431) expect(r.status, what).not.toBe(401);
        if (r.status >= 400) {
          expect(r.body, what).toEqual({ code: expect.any(Number), message: expect.any(String) });
          expect([await counts(a.tenant_id), await counts(b.tenant_id)], `rows written by a refusal: ${what}`).toEqual([
            beforeA,
            beforeB,
          ]);
        }
        if (c.auth === 'b_web') {
          // B's key: A's catalogue and access never show, and A's rows never move.
          expect(r.text, what).not.toContain(aSku);
          expect(r.text, what).not.toContain(aEntitlement);
          expect(await counts(a.tenant_id), what).toEqual(beforeA);
        }
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: false },
    );
    console.log('revenuecat fuzz outcomes (status → count):', Object.fromEntries([...seen.entries()].sort()));
    // The run reached the endpoints (A's own reads answer 200), not only refusals.
    expect(seen.get(200) ?? 0).toBeGreaterThan(RUNS / 50);
  }, 600_000);

  it('the oracle can fail: A’s own key does read A’s entitlement and product', async () => {
    const own = await send(api.apiRoot, {
      method: 'GET',
      path: '/revenuecat/v1/subscribers/a_user',
      headers: { authorization: `Bearer ${keys.a_web}` },
    });
    expect(own.status).toBe(200);
    expect(own.text).toContain(aEntitlement);
    expect(own.text).toContain(aSku);
    const theirs = await send(api.apiRoot, {
      method: 'GET',
      path: '/revenuecat/v1/subscribers/a_user',
      headers: { authorization: `Bearer ${keys.b_web}` },
    });
    expect([theirs.status, theirs.body.subscriber.entitlements]).toEqual([200, {}]);
  });
});
