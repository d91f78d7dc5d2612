import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upsertEntitlement } from '../../db/entitlements';
import { withTenant } from '../../db/tenant-tx';
import {
  entitlementListenerPid,
  entitlementWaits,
  startEntitlementWaits,
  stopEntitlementWaits,
  MAX_WAIT_MS,
} from '../../api/sdk/entitlement-waits';
import { call, newTenant, refill, startApi } from '../helpers/api';
import { testDb } from '../helpers/db';
import { until } from '../helpers/until';

type Tenant = Awaited<ReturnType<typeof newTenant>>;

/**
 * GET /v1/sdk/subscribers/{id}?wait_for=premium: a bounded long-poll answered when the app
 * user's entitlement commits (Postgres NOTIFY once the write has committed, one LISTEN session
 * per process), or at the timeout with what is true then. Real Postgres, the real listeners.
 */
describe('bounded wait for premium on the subscriber endpoint', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let other: Awaited<ReturnType<typeof startApi>>;
  beforeAll(async () => {
    api = await startApi();
    // A second replica: its own listener and its own waiters.
    other = await startApi();
  });
  afterAll(async () => {
    await api?.close();
    await other?.close();
  });

  const waits = (a = api) => entitlementWaits(a.services)!;
  const wait = (t: Tenant, user: string, query = 'wait_for=premium', root = api.apiRoot, init: RequestInit = {}) =>
    call(root, `/v1/sdk/subscribers/${encodeURIComponent(user)}?${query}`, t.publishable_key, init);
  /** What the web lifecycle's activity does when the provider's webhook lands: the one entitlement write, committed. */
  const grant = async (t: Tenant, user: string, state: 'active' | 'expired' = 'active') => {
    const db = testDb();
    const [{ id }] = await db('subscriptions')
      .insert({
        tenant_id: t.tenant_id,
        provider: 'psp_a',
        mode: 'test',
        status: 'active',
        external_id: `sub_${crypto.randomUUID()}`,
        app_user_id: user,
      })
      .returning('id');
    await withTenant(db, t.tenant_id, (trx) =>
      upsertEntitlement(trx, {
        tenantId: t.tenant_id,
        appUserId: user,
        provider: 'psp_a',
        productId: null,
        subscriptionId: id,
        state,
        isSandbox: true,
        expiresAt: null,
        graceUntil: null,
      }),
    );
  };
  const waitingFor = (t: Tenant, n: number, a = api) =>
    until(
      `${n} waiter(s) of ${t.tenant_id}`,
      async () => waits(a).stats(t.tenant_id).waiting,
      (w) => w === n,
    );

  it('a waiter is answered premium when the write commits, long before its timeout; on either replica', async () => {
    const t = await newTenant('wait-prompt');
    const started = Date.now();
    const pending = wait(t, 'buyer', `wait_for=premium&timeout_ms=${MAX_WAIT_MS}`);
    const onOther = wait(t, 'buyer', `wait_for=premium&timeout_ms=${MAX_WAIT_MS}`, other.apiRoot);
    await waitingFor(t, 1);
    await waitingFor(t, 1, other);
    await grant(t, 'buyer');
    const [r, r2] = await Promise.all([pending, onOther]);
    expect(r).toMatchObject({
      status: 200,
      body: {
        object: 'subscriber',
        app_user_id: 'buyer',
        is_premium: true,
        entitlements: [expect.objectContaining({ state: 'active', is_active: true })],
      },
    });
    expect(r2).toMatchObject({ status: 200, body: { is_premium: true } });
    // Woken by the commit, not by the 20 s timeout's fallback re-read.
    expect(Date.now() - started).toBeLessThan(MAX_WAIT_MS / 2);
    expect(waits().stats(t.tenant_id).waiting).toBe(0);
    // Already premium: answered at once (the first read, before any wait).
    const again = await wait(t, 'buyer');
    expect(again.body.is_premium).toBe(true);
  });

  /** Our SDK's sign-in: the anonymous id becomes an alias of the identified one (one customer, docs/transfers.md). */
  const identify = async (t: Tenant, anonymous: string, identified: string) => {
    const r = await call(
      api.apiRoot,
      `/v1/sdk/subscribers/${encodeURIComponent(anonymous)}/identify`,
      t.publishable_key,
      {
        method: 'POST',
        body: JSON.stringify({ new_app_user_id: identified }),
      },
    );
    expect(r.status).toBe(200);
  };
  const anonymousId = () => `$RCAnonymousID:${crypto.randomBytes(16).toString('hex')}`;

  it('a held check wakes on a write under any id of its customer: the anonymous id asked, the purchase under the signed-in id, and the reverse', async () => {
    const t = await newTenant('wait-aliases');
    const [anon, anon2] = [anonymousId(), anonymousId()];
    await identify(t, anon, 'signed-in');
    await identify(t, anon2, 'signed-in-2');
    const started = Date.now();
    // Held on the anonymous id; the purchase is written under the id it signed in as.
    const onAnon = wait(t, anon, `wait_for=premium&timeout_ms=${MAX_WAIT_MS}`);
    // Held on the signed-in id (on the other replica); the purchase is written under the anonymous id.
    const onUser = wait(t, 'signed-in-2', `wait_for=premium&timeout_ms=${MAX_WAIT_MS}`, other.apiRoot);
    await waitingFor(t, 1);
    await waitingFor(t, 1, other);
    await grant(t, 'signed-in');
    await grant(t, anon2);
    const [a, u] = await Promise.all([onAnon, onUser]);
    expect(a).toMatchObject({ status: 200, body: { app_user_id: anon, is_premium: true } });
    expect(u).toMatchObject({ status: 200, body: { app_user_id: 'signed-in-2', is_premium: true } });
    // Woken by the commits, not by the 20 s timeout's fallback re-read.
    expect(Date.now() - started).toBeLessThan(MAX_WAIT_MS / 2);
    expect(waits().stats(t.tenant_id).waiting).toBe(0);
  });

  it('a check held on an anonymous id before it signs in wakes when it does, and follows the signed-in id from then on', async () => {
    const t = await newTenant('wait-sign-in');
    const anon = anonymousId();
    const started = Date.now();
    const pending = wait(t, anon, `wait_for=premium&timeout_ms=${MAX_WAIT_MS}`);
    await waitingFor(t, 1);
    // The sign-in wakes the waiter (its customer changed); it re-reads, is still free, and now follows both ids.
    await identify(t, anon, 'later-user');
    await until(
      'the waiter woken by the sign-in',
      async () => waits().stats(t.tenant_id).wakeups,
      (n) => n >= 1,
    );
    await grant(t, 'later-user');
    expect(await pending).toMatchObject({ status: 200, body: { app_user_id: anon, is_premium: true } });
    expect(Date.now() - started).toBeLessThan(MAX_WAIT_MS / 2);
  });

  it('the timeout answers what is true then (not premium), and a write that grants nothing does not end the wait early', async () => {
    const t = await newTenant('wait-timeout');
    const started = Date.now();
    const pending = wait(t, 'window-shopper', 'wait_for=premium&timeout_ms=1500');
    await waitingFor(t, 1);
    await grant(t, 'window-shopper', 'expired');
    const r = await pending;
    expect(Date.now() - started).toBeGreaterThanOrEqual(1500);
    expect(r).toMatchObject({
      status: 200,
      body: {
        app_user_id: 'window-shopper',
        is_premium: false,
        entitlements: [expect.objectContaining({ state: 'expired' })],
      },
    });
    // The expired write woke it once; it re-read, was still free, and waited on.
    expect(waits().stats(t.tenant_id)).toEqual({ waiting: 0, wakeups: 1 });
  });

  it("a notification for tenant B's user never wakes tenant A's waiter of the same app user id, nor answers B's data", async () => {
    const a = await newTenant('wait-iso-a');
    const b = await newTenant('wait-iso-b');
    const aWait = wait(a, 'same-id', 'wait_for=premium&timeout_ms=1500');
    const bWait = wait(b, 'same-id', `wait_for=premium&timeout_ms=${MAX_WAIT_MS}`);
    await waitingFor(a, 1);
    await waitingFor(b, 1);
    await grant(b, 'same-id');
    expect((await bWait).body).toMatchObject({ app_user_id: 'same-id', is_premium: true });
    const ra = await aWait;
    expect(ra).toMatchObject({ status: 200, body: { app_user_id: 'same-id', is_premium: false, entitlements: [] } });
    expect(waits().stats(a.tenant_id).wakeups).toBe(0);
    expect(waits().stats(b.tenant_id).wakeups).toBe(1);
    // A notification naming A's tenant with B's subscriber hash (as a forged or confused payload would) wakes nobody of A's.
    const aAgain = wait(a, 'same-id', 'wait_for=premium&timeout_ms=800');
    await waitingFor(a, 1);
    const bHash = crypto.createHash('sha256').update(`${b.tenant_id}:same-id`).digest('hex');
    await testDb().raw(`select pg_notify('entitlement_changed', ?)`, [`${a.tenant_id}:${bHash}`]);
    expect((await aAgain).body).toMatchObject({ is_premium: false, entitlements: [] });
    expect(waits().stats(a.tenant_id).wakeups).toBe(0);
  });

  it('bounds: 2 concurrent waits per app user, then 429 rate_limited; a full process is 503 temporarily_unavailable; a client that leaves frees its slot', async () => {
    const t = await newTenant('wait-bounds');
    const gone = new AbortController();
    const held = [
      wait(t, 'looper', 'wait_for=premium&timeout_ms=3000', api.apiRoot, { signal: gone.signal }).catch(() => null),
      wait(t, 'looper', 'wait_for=premium&timeout_ms=3000'),
    ];
    await waitingFor(t, 2);
    const third = await wait(t, 'looper');
    expect(third).toMatchObject({
      status: 429,
      body: { error: 'rate_limited', detail: expect.stringMatching(/per app user/) },
    });
    expect(third.headers.get('retry-after')).toBe('1');
    // Another app user of the tenant still gets a slot (and a plain read is never refused by the wait bounds).
    expect((await wait(t, 'looper', '')).status).toBe(200);
    gone.abort();
    await waitingFor(t, 1);
    await Promise.all(held);

    // The process bound, on a replica started with small limits.
    const small = await startApi();
    await stopEntitlementWaits(small.services);
    await startEntitlementWaits(small.services, { perProcess: 2, perTenant: 1, perUser: 1 });
    try {
      const t2 = await newTenant('wait-bounds-2');
      const h = [
        wait(t, 'u1', 'wait_for=premium&timeout_ms=2000', small.apiRoot),
        wait(t2, 'u2', 'wait_for=premium&timeout_ms=2000', small.apiRoot),
      ];
      await until(
        'two waiters',
        async () => entitlementWaits(small.services)!.stats().waiting,
        (n) => n === 2,
      );
      const perTenant = await wait(t, 'u3', 'wait_for=premium', small.apiRoot);
      expect(perTenant).toMatchObject({
        status: 429,
        body: { error: 'rate_limited', detail: expect.stringMatching(/tenant/) },
      });
      const t3 = await newTenant('wait-bounds-3');
      const full = await wait(t3, 'u4', 'wait_for=premium', small.apiRoot);
      expect(full).toMatchObject({ status: 503, body: { error: 'temporarily_unavailable' } });
      expect(full.headers.get('retry-after')).toBe('1');
      await Promise.all(h);
    } finally {
      await small.close();
    }
  });

  it('a wait spends the client tokens of a read (tenant, address, app user) and is refused 429 before waiting when they are gone', async () => {
    const t = await newTenant('wait-tokens');
    await wait(t, 'spender', 'wait_for=premium&timeout_ms=0');
    const rows = await testDb()('client_rate_limit_buckets').where({ tenant_id: t.tenant_id }).select('bucket');
    expect(rows.map((r: { bucket: string }) => r.bucket).sort()).toEqual(['addr:127.0.0.1', 'sdk', 'user:spender']);
    await testDb()('client_rate_limit_buckets')
      .where({ tenant_id: t.tenant_id, bucket: 'user:spender' })
      .update({ tokens: 0, refreshed_at: testDb().raw("now() + interval '1 hour'") });
    const r = await wait(t, 'spender');
    expect(r).toMatchObject({ status: 429, body: { error: 'rate_limited' } });
    expect(waits().stats(t.tenant_id).waiting).toBe(0);
    await refill(t.tenant_id);
  });

  it('bad wait parameters are 400 invalid_request naming the parameter; a long timeout is clamped to the bound', async () => {
    const t = await newTenant('wait-input');
    for (const [q, param] of [
      ['wait_for=gold', 'wait_for'],
      ['wait_for=premium&wait_for=premium', 'wait_for'],
      ['timeout_ms=100', 'wait_for'],
      ['wait_for=premium&timeout_ms=-1', 'timeout_ms'],
      ['wait_for=premium&timeout_ms=1.5', 'timeout_ms'],
      ['wait_for=premium&timeout_ms=', 'timeout_ms'],
      ['wait_for=premium&timeout_ms=1e3', 'timeout_ms'],
      ['wait_for=premium&timeout_ms=99999999999', 'timeout_ms'],
    ]) {
      const r = await wait(t, 'u', q);
      expect({ q, status: r.status, body: r.body }).toEqual({
        q,
        status: 400,
        body: { error: 'invalid_request', detail: expect.any(String), param },
      });
    }
    await grant(t, 'rich');
    const clamped = await wait(t, 'rich', 'wait_for=premium&timeout_ms=600000');
    expect(clamped).toMatchObject({ status: 200, body: { is_premium: true } });
    await refill(t.tenant_id);
  });

  it('the listening session comes back after Postgres ends it, and waits started before still wake', async () => {
    const t = await newTenant('wait-reconnect');
    const pid = entitlementListenerPid(api.services);
    expect(pid).toBeTypeOf('number');
    const pending = wait(t, 'patient', `wait_for=premium&timeout_ms=${MAX_WAIT_MS}`);
    await waitingFor(t, 1);
    const started = Date.now();
    // Only our own process's session (its pid, just read from it).
    await testDb().raw('select pg_terminate_backend(?)', [pid]);
    await until(
      'a new listening session',
      async () => entitlementListenerPid(api.services),
      (p) => p !== null && p !== pid,
    );
    await grant(t, 'patient');
    expect((await pending).body.is_premium).toBe(true);
    expect(Date.now() - started).toBeLessThan(MAX_WAIT_MS / 2);
  });
});
