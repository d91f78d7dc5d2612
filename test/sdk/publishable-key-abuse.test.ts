import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upsertEntitlement } from '../../db/entitlements';
import { withTenant } from '../../db/tenant-tx';
import { CLIENT_LIMITS } from '../../api/sdk/limits';
import { WAIT_LIMITS } from '../../api/sdk/entitlement-waits';
import { clientAddressKey } from '../../domain/client-address-key';
import { freePort } from '../../runtime/ports';
import { generateMasterKey } from '../../vault/vault';
import { startApiProcess, type ApiProcess } from '../helpers/api-process';
import { call, newTenant } from '../helpers/api';
import { testDb } from '../helpers/db';
import { startStoreStack, type StoreStack } from '../helpers/stores';
import { until } from '../helpers/until';

type Tenant = Awaited<ReturnType<typeof newTenant>>;

/**
 * Issue #28, item 4: a publishable key is public, and whoever holds it may have many addresses
 * (three servers, or one IPv6 /64 with 2^64 of them). The real api process behind a trusted
 * proxy (TRUSTED_PROXIES + X-Forwarded-For is how a test is many clients).
 */

/** A random address in a random /64 of 2001:db8::/32 (documentation range): `at(i)` is the i-th host in it. */
function ipv6Subnet() {
  const hex = () => crypto.randomBytes(2).readUInt16BE().toString(16);
  const prefix = `2001:db8:${hex()}:${hex()}`;
  return { prefix, at: (i: number) => `${prefix}:${(i + 1).toString(16)}:${hex()}:${hex()}:${hex()}` };
}
const ipv4 = () => `198.18.${crypto.randomInt(256)}.${1 + crypto.randomInt(254)}`;
/** A bucket row that stays empty for an hour (its next refill starts from an hour ahead). */
const emptyBucket = (tenantId: string, bucket: string) =>
  testDb()('client_rate_limit_buckets')
    .insert({ tenant_id: tenantId, bucket, tokens: 0, refreshed_at: testDb().raw("now() + interval '1 hour'") })
    .onConflict(['tenant_id', 'bucket'])
    .merge();
/** A bucket's stored tokens: what the last request that took from it left. */
const stored = async (tenantId: string, bucket: string) =>
  Number((await testDb()('client_rate_limit_buckets').where({ tenant_id: tenantId, bucket }).first('tokens'))?.tokens);
/** A bucket's level now (stored tokens plus the refill since, uncapped). */
const level = async (tenantId: string, bucket: string, rate: number) => {
  const row = await testDb()('client_rate_limit_buckets')
    .where({ tenant_id: tenantId, bucket })
    .first('tokens', testDb().raw('extract(epoch from now() - refreshed_at) as age'));
  return row ? Number(row.tokens) + Number(row.age) * rate : undefined;
};
async function grant(t: Tenant, user: string) {
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
      state: 'active',
      isSandbox: true,
      expiresAt: null,
      graceUntil: null,
    }),
  );
}

describe('publishable-key abuse: premium checks and wait slots (issue #28, item 4 b–c)', () => {
  let api: ApiProcess;
  let root: string;
  let metricsPort: number;
  beforeAll(async () => {
    metricsPort = await freePort();
    api = await startApiProcess({
      TRUSTED_PROXIES: '127.0.0.1,::1',
      MASTER_KEY: generateMasterKey(),
      METRICS_PORT: String(metricsPort),
    });
    root = `http://127.0.0.1:${api.apiPort}`;
  });
  afterAll(async () => api?.stop());

  const check = (t: Tenant, user: string, from: string, query = '', init: RequestInit = {}) =>
    call(root, `/v1/sdk/subscribers/${encodeURIComponent(user)}${query ? `?${query}` : ''}`, t.publishable_key, {
      ...init,
      headers: { 'x-forwarded-for': from },
    });
  const metric = async (name: string, labels = '') => {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    const line = text
      .split('\n')
      .find((l) => l.startsWith(`${name}${labels} `) || (labels === '' && l.startsWith(`${name} `)));
    return line ? Number(line.split(' ').pop()) : undefined;
  };

  it('three addresses that emptied the tenant’s client bucket cannot make every install’s premium check 429; they stay held to their own buckets', async () => {
    const t = await newTenant('pk-drain');
    await grant(t, 'paying-install');
    const attackers = [ipv4(), ipv4(), ipv4()];
    // The attackers spend for real, from three addresses: each request takes from the tenant's bucket and its address's.
    const spent = await Promise.all(
      attackers.map(async (a) => {
        let n = 0;
        for (let i = 0; i < 40; i++) if ((await check(t, `bot-${a}-${i}`, a)).status === 200) n++;
        return n;
      }),
    );
    expect(spent).toEqual([40, 40, 40]);
    expect(await stored(t.tenant_id, 'sdk')).toBeLessThan(CLIENT_LIMITS.tenant.capacity);
    // …and keep at it (three addresses at their 100/s outrun the tenant's 200/s refill): the
    // state they reach, the tenant's bucket empty, set here rather than waited for.
    await emptyBucket(t.tenant_id, 'sdk');
    const overBefore = (await metric('billing_sdk_reads_over_tenant_limit_total')) ?? 0;

    // Every other install still learns the truth, whatever its address (IPv4 or IPv6, any /64).
    const installs = [
      ...Array.from({ length: 12 }, () => ipv4()),
      ...Array.from({ length: 4 }, () => ipv6Subnet().at(0)),
    ];
    for (const [i, from] of installs.entries()) {
      const r = await check(t, `install-${i}`, from);
      expect({ from, status: r.status, body: r.body }).toMatchObject({
        from,
        status: 200,
        body: { object: 'subscriber', is_premium: false },
      });
    }
    const paying = await check(t, 'paying-install', ipv4());
    expect(paying).toMatchObject({ status: 200, body: { is_premium: true } });
    // A wait is answered from the stored state at once: it holds no slot over the tenant's limit.
    const started = Date.now();
    expect(await check(t, 'install-0', installs[0], 'wait_for=premium&timeout_ms=5000')).toMatchObject({
      status: 200,
      body: { is_premium: false },
    });
    expect(Date.now() - started).toBeLessThan(4000);
    expect(await metric('billing_sdk_reads_over_tenant_limit_total')).toBeGreaterThanOrEqual(
      overBefore + installs.length + 2,
    );
    // The tenant's bucket stays empty: reads over its limit do not spend it.
    expect(await level(t.tenant_id, 'sdk', CLIENT_LIMITS.tenant.refillPerSecond)).toBeLessThan(1);

    // Per-address limits still hold: an attacker whose own bucket is spent is refused, naming its address.
    await emptyBucket(t.tenant_id, `addr:${attackers[0]}`);
    const held = await check(t, 'bot-again', attackers[0]);
    expect(held).toMatchObject({ status: 429, body: { error: 'rate_limited' } });
    expect(Number(held.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // Writes and other endpoints stay refused while the tenant's bucket is empty.
    const paywall = await call(root, '/v1/sdk/paywall', t.publishable_key, { headers: { 'x-forwarded-for': ipv4() } });
    expect(paywall).toMatchObject({
      status: 429,
      body: { error: 'rate_limited', detail: expect.stringMatching(/tenant/) },
    });
  });

  it('one IPv6 /64 is one client address: its many addresses share one bucket, per tenant', async () => {
    const t = await newTenant('pk-slash64');
    const other = await newTenant('pk-slash64-other');
    const net = ipv6Subnet();
    // Real requests from many addresses of one /64 land in one bucket named by the /64.
    for (let i = 0; i < 10; i++) expect((await check(t, `u-${i}`, net.at(i))).status).toBe(200);
    const rows = await testDb()('client_rate_limit_buckets')
      .where({ tenant_id: t.tenant_id })
      .andWhereLike('bucket', 'addr:%')
      .select('bucket');
    expect(rows.map((r: { bucket: string }) => r.bucket)).toEqual([`addr:${net.prefix}::/64`]);
    expect(await stored(t.tenant_id, `addr:${net.prefix}::/64`)).toBeLessThan(CLIENT_LIMITS.address.capacity);

    // Once that bucket is spent, every address of the /64 is refused, and only those.
    await emptyBucket(t.tenant_id, `addr:${clientAddressKey(net.at(0))}`);
    for (let i = 20; i < 30; i++) {
      const r = await check(t, `fresh-${i}`, net.at(i));
      expect({ i, status: r.status, detail: r.body?.detail }).toMatchObject({
        i,
        status: 429,
        detail: expect.stringMatching(/client address/),
      });
    }
    expect((await check(t, 'fresh-elsewhere', ipv6Subnet().at(0))).status).toBe(200);
    // Keyed with the tenant: the same /64 is free at another tenant's app.
    expect((await check(other, 'fresh-other', net.at(40))).status).toBe(200);
  });

  it(`wait_for=premium slots are bounded per client address (${WAIT_LIMITS.perAddress}; an IPv6 /64 is one), so one key holder cannot take the tenant's`, async () => {
    const t = await newTenant('pk-waits');
    const net = ipv6Subnet();
    const gone = new AbortController();
    const held = Array.from({ length: WAIT_LIMITS.perAddress }, (_, i) =>
      check(t, `waiter-${i}`, net.at(i), 'wait_for=premium&timeout_ms=15000', { signal: gone.signal }).catch(
        () => null,
      ),
    );
    await until(
      'the /64 holds its share of waits',
      () => metric('billing_sdk_waits_held'),
      (n) => n === WAIT_LIMITS.perAddress,
    );

    // One more from yet another address of the same /64: refused, a plain read still answered.
    const more = await check(t, 'waiter-extra', net.at(100), 'wait_for=premium&timeout_ms=15000');
    expect(more).toMatchObject({
      status: 429,
      body: { error: 'rate_limited', detail: expect.stringMatching(/per client address/) },
    });
    expect(more.headers.get('retry-after')).toBe('1');
    expect((await check(t, 'waiter-extra', net.at(100))).status).toBe(200);
    expect(await metric('billing_client_rate_limit_refusals_total', '{limit="wait_address"}')).toBeGreaterThanOrEqual(
      1,
    );

    // Other installs of the tenant still get a slot: another /64, an IPv4 address.
    for (const from of [ipv6Subnet().at(0), ipv4()]) {
      expect(await check(t, `other-${from}`, from, 'wait_for=premium&timeout_ms=0')).toMatchObject({
        status: 200,
        body: { is_premium: false },
      });
    }
    gone.abort();
    await Promise.all(held);
    await until(
      'slots freed',
      () => metric('billing_sdk_waits_held'),
      (n) => n === 0,
    );
    expect((await check(t, 'waiter-extra', net.at(100), 'wait_for=premium&timeout_ms=0')).status).toBe(200);
  });
});

describe('publishable-key abuse: store purchase registrations (issue #28, item 4 a)', () => {
  let s: StoreStack;
  beforeAll(async () => {
    // Errors logged, so a 5xx below says what went wrong in the failure message.
    s = await startStoreStack('pk-registrations', {
      apiProcessEnv: { TRUSTED_PROXIES: '127.0.0.1,::1', LOG_LEVEL: 'error' },
    });
  });
  afterAll(async () => s?.close());

  const register = (user: string, from: string) =>
    call(s.api.apiRoot, '/v1/sdk/store-purchases', s.pkTest, {
      method: 'POST',
      headers: { 'x-forwarded-for': from },
      body: JSON.stringify({
        app_user_id: user,
        provider: 'store_android',
        product_id: 'premium_monthly',
        purchase_token: `made-up-${crypto.randomUUID()}`,
      }),
    });

  it('fresh app user ids from one address get no fresh registrations: the address’s lane (an IPv6 /64 is one) and the tenant’s hold', async () => {
    const net = ipv6Subnet();
    const cap = CLIENT_LIMITS.registrationAddress.capacity;
    const started = Date.now();
    const statuses: number[] = [];
    // A made-up token under a new app user id each time, from addresses of one /64, five at a time.
    for (let i = 0; i < cap + 10; i += 5) {
      statuses.push(
        ...(
          await Promise.all(
            [0, 1, 2, 3, 4].map((j) => register(`fresh-${i + j}-${crypto.randomUUID()}`, net.at(i + j))),
          )
        ).map((r) => r.status),
      );
    }
    // Admitted by the lane: a workflow asked the store, which knows no such token (404), or, on a
    // loaded machine, had not answered within the request's wait (503, retry): both spent a token.
    const ran = statuses.filter((x) => x !== 429).length;
    expect(
      statuses.filter((x) => ![404, 429, 503].includes(x)),
      `${JSON.stringify(statuses)}\n${s.api.log?.() ?? ''}`,
    ).toEqual([]);
    const refilled = Math.ceil(((Date.now() - started) / 1000) * CLIENT_LIMITS.registrationAddress.refillPerSecond);
    expect(ran, JSON.stringify(statuses)).toBeGreaterThanOrEqual(cap);
    expect(ran, JSON.stringify(statuses)).toBeLessThanOrEqual(cap + refilled);
    expect(
      statuses.filter((x) => x === 429),
      JSON.stringify(statuses),
    ).toHaveLength(statuses.length - ran);
    const refused = await register(`fresh-last-${crypto.randomUUID()}`, net.at(999));
    expect(refused).toMatchObject({
      status: 429,
      body: { error: 'rate_limited', detail: expect.stringMatching(/registrations from this client address/) },
    });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);

    // Another address still registers (its workflow runs and the store answers 404).
    expect(await register('someone-else', ipv4())).toMatchObject({
      status: 404,
      body: { error: 'purchase_not_found' },
    });

    // The tenant's own registration lane, once spent, refuses every address: however many a
    // key holder has, registrations cannot spend the tenant's store quota.
    await emptyBucket(s.tenant.tenant_id, 'regs');
    const spentTenant = await register(`fresh-${crypto.randomUUID()}`, ipv4());
    expect(spentTenant).toMatchObject({
      status: 429,
      body: { detail: expect.stringMatching(/registrations of this app’s tenant/) },
    });
    await testDb()('client_rate_limit_buckets').where({ tenant_id: s.tenant.tenant_id, bucket: 'regs' }).del();
  });
});
