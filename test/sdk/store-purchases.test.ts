import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDb } from '../helpers/db';
import { call, refill } from '../helpers/api';
import { startStoreStack, type StoreStack } from '../helpers/stores';
import { Billing, MemoryStorage } from '../../sdk/src/index';
import { purchaseKey } from '../../providers/purchase-ref';
import { appAccountTokenFor } from '../../providers/store_ios/app-account-token';
import { storePurchaseWorkflowId } from '../../temporal/workflow-starts';

/** Every string in a workflow history, payload bytes decoded: what an operator could read there. */
function historyText(value: unknown): string {
  const out: string[] = [];
  const walk = (v: unknown) => {
    if (v instanceof Uint8Array) out.push(Buffer.from(v).toString('utf8'));
    else if (typeof v === 'string') out.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  walk(value);
  return out.join('\n');
}

/**
 * POST /v1/sdk/store-purchases against the real API, worker, Postgres and both store emulators:
 * the purchase is re-read at the store, claimed for one app user, acknowledged, and reconciled
 * into the entitlement the SDK reads; the store's sandbox evidence turns readiness green.
 */
describe('store purchase registration', () => {
  let s: StoreStack;
  const android = (token: string, user: string, extra: Record<string, unknown> = {}) => ({
    app_user_id: user,
    provider: 'store_android',
    plan_id: 'premium_monthly',
    product_id: 'premium_monthly',
    purchase_token: token,
    ...extra,
  });
  const buyAndroid = (user?: string) =>
    s.control.store_android<{ purchase_token: string }>('POST', '/sandbox-purchase', {
      product_id: 'premium_monthly',
      account: s.accounts.store_android,
      ...(user ? { app_user_id: user } : {}),
    });
  const buyIos = (user: string) =>
    s.control.store_ios<{ transaction_id: string; signed_transaction: string }>('POST', '/sandbox-purchase', {
      product_id: 'premium_monthly',
      account: s.accounts.store_ios,
      app_user_id: user,
    });
  const row = (provider: string) => s.readiness().then((rows) => rows.find((r) => r.provider === provider));

  beforeAll(async () => {
    s = await startStoreStack('store-reg');
  });
  afterAll(async () => s?.close());

  it('Android: a sandbox purchase registers → premium, acknowledged at Play, readiness turns test-ready', async () => {
    const before = await row('store_android');
    expect(before).toMatchObject({ test_ready: false, test_mechanism: 'license_tester' });
    expect(before.manual_steps.length).toBeGreaterThan(0);
    expect((await s.subscriber('a_user')).body).toMatchObject({ is_premium: false, entitlements: [] });

    const { purchase_token } = await buyAndroid('a_user');
    const r = await s.register(android(purchase_token, 'a_user'));
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      object: 'subscriber',
      app_user_id: 'a_user',
      mode: 'test',
      is_premium: true,
      cache_ttl_seconds: 604800,
    });
    expect(r.body.entitlements).toEqual([
      expect.objectContaining({
        provider: 'store_android',
        state: 'active',
        is_active: true,
        is_sandbox: true,
        sku: 'premium_monthly',
      }),
    ]);
    // The SDK's read endpoint answers the same.
    expect((await s.subscriber('a_user')).body).toEqual(r.body);

    const state = await s.control.store_android('GET', '/state');
    expect(state.purchases.find((p: any) => p.token === purchase_token)).toMatchObject({ acknowledged: true });

    // The run is findable in the Temporal UI by tenant, provider and kind; its history holds no credential.
    const handle = s.worker.client.workflow.getHandle(
      storePurchaseWorkflowId(s.tenant.tenant_id, 'store_android', purchaseKey('store_android', purchase_token)),
    );
    const described = await handle.describe();
    expect(described.searchAttributes).toMatchObject({
      BillingTenantId: [s.tenant.tenant_id],
      BillingProvider: ['store_android'],
      BillingKind: ['store-purchase'],
    });
    const history = historyText(await handle.fetchHistory());
    expect(history).toContain('readStorePurchase');
    expect(history).not.toMatch(/PRIVATE KEY|private_key|service_account_json/);

    const after = await row('store_android');
    expect(after).toMatchObject({ test_ready: true, manual_steps: null, console_url: null });
    // The token is kept hashed only; the subscription is a test-mode record.
    const sub = await testDb()('subscriptions')
      .where({ tenant_id: s.tenant.tenant_id, provider: 'store_android' })
      .first();
    expect(sub).toMatchObject({ status: 'active', mode: 'test', app_user_id: 'a_user' });
    expect(JSON.stringify(sub)).not.toContain(purchase_token);
  });

  it('Android: the same user again is idempotent (200, one claim, one entitlement); another user is 409 purchase_token_reused', async () => {
    const { purchase_token } = await buyAndroid('b_user');
    const first = await s.register(android(purchase_token, 'b_user'));
    const again = await s.register(android(purchase_token, 'b_user'));
    expect([first.status, again.status]).toEqual([200, 200]);
    expect(again.body.entitlements).toEqual(
      first.body.entitlements.map((e: any) => ({ ...e, updated_at: expect.any(String) })),
    );
    const claims = await testDb()('store_purchase_tokens')
      .where({ tenant_id: s.tenant.tenant_id, app_user_id: 'b_user' })
      .count({ n: '*' })
      .first();
    expect(Number(claims!.n)).toBe(1);

    // The store names the buyer (obfuscatedExternalAccountId): another app user is refused before any claim.
    const thief = await s.register(android(purchase_token, 'mallory'));
    expect(thief.status).toBe(409);
    expect(thief.body.error).toBe('purchase_token_reused');
    expect((await s.subscriber('mallory')).body.is_premium).toBe(false);
  });

  it('Android: a purchase naming no buyer belongs to the first app user to register it (the unique claim decides)', async () => {
    const { purchase_token } = await buyAndroid();
    const [x, y] = await Promise.all([
      s.register(android(purchase_token, 'first_u')),
      s.register(android(purchase_token, 'second_u')),
    ]);
    const statuses = [x.status, y.status].sort();
    expect(statuses).toEqual([200, 409]);
    const loser = x.status === 409 ? x : y;
    expect(loser.body.error).toBe('purchase_token_reused');
    const owners = await testDb()('store_purchase_tokens')
      .where({ tenant_id: s.tenant.tenant_id })
      .whereIn('app_user_id', ['first_u', 'second_u'])
      .select('app_user_id');
    expect(owners).toHaveLength(1);
    const winner = owners[0].app_user_id;
    expect((await s.register(android(purchase_token, winner))).status).toBe(200);
    expect((await s.register(android(purchase_token, winner === 'first_u' ? 'second_u' : 'first_u'))).status).toBe(409);
  });

  it('a forged token is 404 purchase_not_found (Play does not know it); a token for another product is 400 invalid_purchase', async () => {
    const forged = await s.register(android('forged-token-that-play-never-issued', 'f_user'));
    expect(forged.status).toBe(404);
    expect(forged.body.error).toBe('purchase_not_found');
    const { purchase_token } = await buyAndroid('f_user');
    const other = await s.register(android(purchase_token, 'f_user', { product_id: 'premium_annual' }));
    expect(other.status).toBe(400);
    expect(other.body.error).toBe('invalid_purchase');
    expect((await s.subscriber('f_user')).body.is_premium).toBe(false);
    // Bought but not paid yet (Play PENDING): nothing to grant until it is.
    const pending = await s.control.store_android<{ purchase_token: string }>('POST', '/purchases', {
      product_id: 'premium_monthly',
      account: s.accounts.store_android,
      app_user_id: 'f_user',
      test: true,
      state: 'SUBSCRIPTION_STATE_PENDING',
    });
    expect(await s.register(android(pending.purchase_token, 'f_user'))).toMatchObject({
      status: 409,
      body: { error: 'purchase_pending' },
    });
    expect((await s.subscriber('f_user')).body.is_premium).toBe(false);
  });

  it('pk_test_ registers sandbox purchases only, pk_live_ real ones only', async () => {
    const { purchase_token } = await buyAndroid('l_user');
    const live = await s.register(android(purchase_token, 'l_user'), s.pkLive);
    expect(live.status).toBe(400);
    expect(live.body).toMatchObject({ error: 'invalid_purchase', detail: expect.stringMatching(/sandbox purchase/) });
    const real = await s.control.store_android<{ purchase_token: string }>('POST', '/purchases', {
      product_id: 'premium_monthly',
      account: s.accounts.store_android,
      app_user_id: 'l_user',
    });
    // The test service account cannot see a real purchase at all.
    expect((await s.register(android(real.purchase_token, 'l_user'))).status).toBe(404);
    const ok = await s.register(android(real.purchase_token, 'l_user'), s.pkLive);
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({
      mode: 'live',
      is_premium: true,
      entitlements: [expect.objectContaining({ is_sandbox: false })],
    });
    expect((await s.subscriber('l_user')).body.is_premium).toBe(false); // the test key sees no live record
  });

  it('bad input is 400 invalid_request naming the parameter; a secret key is refused', async () => {
    await refill(s.tenant.tenant_id);
    const cases: [unknown, string][] = [
      [{ app_user_id: 'u', provider: 'store_android', product_id: 'premium_monthly' }, 'purchase_token'],
      [{ app_user_id: 'u', provider: 'stripe', purchase_token: 't' }, 'provider'],
      [{ provider: 'store_android', product_id: 'p', purchase_token: 't' }, 'app_user_id'],
      [
        { app_user_id: 'x'.repeat(201), provider: 'store_android', product_id: 'p', purchase_token: 't' },
        'app_user_id',
      ],
      [{ app_user_id: 'u', provider: 'store_android', product_id: 7, purchase_token: 't' }, 'product_id'],
      [{ app_user_id: 'u', provider: 'store_ios' }, 'signed_transaction'],
      [{ app_user_id: 'u', provider: 'store_ios', signed_transaction: 'not a jws' }, 'signed_transaction'],
    ];
    for (const [body, param] of cases) {
      const r = await s.register(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body).toMatchObject({ error: 'invalid_request', param });
    }
    const notJson = await call(s.api.apiRoot, '/v1/sdk/store-purchases', s.pkTest, { method: 'POST', body: '{nope' });
    expect(notJson).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
    const nul = await s.register({
      app_user_id: 'u\u0000',
      provider: 'store_android',
      product_id: 'p',
      purchase_token: 't',
    });
    expect(nul.status).toBe(400);

    const secret = await s.register(android('t', 'u'), s.tenant.secret_key);
    expect(secret.status).toBe(401);
    expect(secret.body).toMatchObject({
      error: 'invalid_api_key',
      detail: expect.stringMatching(/Secret keys are refused/),
    });
    expect((await s.register(android('t', 'u'), 'pk_test_unknownunknownunknown')).status).toBe(401);
  });

  it('the client SDK (2.x) buys through the Android store lane and registers against the real endpoint → purchased, premium', async () => {
    Billing.reset();
    try {
      const billing = Billing.configure({
        publishableKey: s.pkTest,
        backend: s.api.apiRoot,
        appUserId: 'sdk_user',
        platform: 'android',
        storage: new MemoryStorage(),
        storeBilling: {
          activity: { name: 'MainActivity' },
          // The device's Play Billing library, as a license tester's device would complete it.
          async purchase({ productId }) {
            const bought = await s.control.store_android<{ purchase_token: string; product_id: string }>(
              'POST',
              '/sandbox-purchase',
              { product_id: productId, account: s.accounts.store_android, app_user_id: 'sdk_user' },
            );
            return { purchaseToken: bought.purchase_token, productId: bought.product_id };
          },
        },
      });
      const result = await billing.checkout({
        planId: 'premium_monthly',
        product: { kind: 'digital', android_store_product_id: 'premium_monthly' },
      });
      expect(result).toMatchObject({
        state: 'purchased',
        lane: 'store',
        entitlements: { isPremium: true, stale: false },
      });
    } finally {
      Billing.reset();
    }
  });

  it('a store that keeps failing is 503 store_unavailable with Retry-After; the same request succeeds once it answers', async () => {
    const { purchase_token } = await buyAndroid('d_user');
    await s.control.store_android('POST', '/faults', { mode: 'error', status: 503, route: '/androidpublisher/' });
    try {
      const down = await s.register(android(purchase_token, 'd_user'));
      expect(down).toMatchObject({ status: 503, body: { error: 'store_unavailable' } });
      expect(down.headers.get('retry-after')).toBeTruthy();
    } finally {
      await s.control.store_android('DELETE', '/faults');
    }
    const up = await s.register(android(purchase_token, 'd_user'));
    expect(up).toMatchObject({ status: 200, body: { is_premium: true } });
  });

  it('registration is rate-limited like every client endpoint (429 rate_limited when the tenant’s client bucket is empty)', async () => {
    // Refreshed "in the future": the bucket refills 200/s, so a level of 0 as of now would not stay empty.
    await testDb()('client_rate_limit_buckets')
      .insert({
        tenant_id: s.tenant.tenant_id,
        bucket: 'sdk',
        tokens: 0,
        refreshed_at: testDb().raw("now() + interval '1 hour'"),
      })
      .onConflict(['tenant_id', 'bucket'])
      .merge();
    const r = await s.register(android('t', 'u'));
    expect(r).toMatchObject({ status: 429, body: { error: 'rate_limited' } });
    await refill(s.tenant.tenant_id);
  });

  it('iOS: a sandbox signed transaction is verified, re-read from the App Store Server API → premium; readiness turns test-ready', async () => {
    expect(await row('store_ios')).toMatchObject({ test_ready: false, test_mechanism: 'sandbox_apple_id' });
    const { signed_transaction, transaction_id } = await buyIos('i_user');
    const r = await s.register({ app_user_id: 'i_user', provider: 'store_ios', signed_transaction });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      is_premium: true,
      entitlements: [
        expect.objectContaining({ provider: 'store_ios', state: 'active', is_sandbox: true, sku: 'premium_monthly' }),
      ],
    });
    expect(await row('store_ios')).toMatchObject({ test_ready: true, manual_steps: null });
    const sub = await testDb()('subscriptions').where({ tenant_id: s.tenant.tenant_id, provider: 'store_ios' }).first();
    expect(sub).toMatchObject({ external_id: transaction_id, status: 'active', mode: 'test' });

    expect((await s.register({ app_user_id: 'i_user', provider: 'store_ios', signed_transaction })).status).toBe(200);
    // StoreKit's appAccountToken names the buyer: another app user is refused.
    const thief = await s.register({ app_user_id: 'mallory', provider: 'store_ios', signed_transaction });
    expect(thief).toMatchObject({ status: 409, body: { error: 'purchase_token_reused' } });
  });

  it('iOS: a tampered signed transaction is refused (400 invalid_purchase); a sandbox one with the live key is refused', async () => {
    const { signed_transaction } = await buyIos('t_user');
    const [h, p, sig] = signed_transaction.split('.');
    const payload = JSON.parse(Buffer.from(p, 'base64url').toString('utf8'));
    const forged = [
      h,
      Buffer.from(JSON.stringify({ ...payload, productId: 'premium_annual' })).toString('base64url'),
      sig,
    ].join('.');
    const r = await s.register({ app_user_id: 't_user', provider: 'store_ios', signed_transaction: forged });
    expect(r).toMatchObject({ status: 400, body: { error: 'invalid_purchase' } });
    const live = await s.register({ app_user_id: 't_user', provider: 'store_ios', signed_transaction }, s.pkLive);
    expect(live).toMatchObject({ status: 400, body: { error: 'invalid_purchase' } });
    expect((await s.subscriber('t_user')).body.is_premium).toBe(false);
  });

  // Last: it turns the iOS readiness test-ready, which the iOS registration test above checks from its not-ready start.
  it('the client SDK buys through the iOS StoreKit lane: appAccountToken from the SDK, signed transaction registered → purchased, premium', async () => {
    Billing.reset();
    try {
      const handed: Array<{ productId: string; appAccountToken?: string }> = [];
      const billing = Billing.configure({
        publishableKey: s.pkTest,
        backend: s.api.apiRoot,
        appUserId: 'sdk_ios_user',
        platform: 'ios',
        storage: new MemoryStorage(),
        storeBilling: {
          // StoreKit 2 in a sandbox account: buys with the appAccountToken the SDK hands over.
          async purchase({ productId, appAccountToken }) {
            handed.push({ productId, appAccountToken });
            const bought = await s.control.store_ios<{ signed_transaction: string }>('POST', '/sandbox-purchase', {
              product_id: productId,
              account: s.accounts.store_ios,
              app_user_id: appAccountToken,
            });
            return { signedTransaction: bought.signed_transaction, productId };
          },
        },
      });
      expect(await billing.isPremium()).toBe(false);
      const result = await billing.checkout({
        planId: 'premium_monthly',
        product: { kind: 'digital', ios_store_product_id: 'premium_monthly' },
      });
      expect(result).toMatchObject({
        state: 'purchased',
        lane: 'store',
        purchase: { productId: 'premium_monthly' },
        entitlements: { isPremium: true, stale: false },
      });
      // The token StoreKit got is the one the service derives for this app user: its buyer check passed.
      expect(handed).toEqual([{ productId: 'premium_monthly', appAccountToken: appAccountTokenFor('sdk_ios_user') }]);
      expect((await s.subscriber('sdk_ios_user')).body.entitlements).toEqual([
        expect.objectContaining({ provider: 'store_ios', state: 'active', is_sandbox: true }),
      ]);
      // Another app user registering the same transaction is refused: the SDK returns the Error state, not a throw.
      Billing.reset();
      const thief = Billing.configure({
        publishableKey: s.pkTest,
        backend: s.api.apiRoot,
        appUserId: 'sdk_ios_thief',
        platform: 'ios',
        storage: new MemoryStorage(),
        storeBilling: {
          purchase: async ({ productId }) => ({
            signedTransaction: (
              await s.control.store_ios<{ signed_transaction: string }>('POST', '/sandbox-purchase', {
                product_id: productId,
                account: s.accounts.store_ios,
                app_user_id: appAccountTokenFor('someone_else'),
              })
            ).signed_transaction,
            productId,
          }),
        },
      });
      const refused = await thief.checkout({
        planId: 'premium_monthly',
        product: { kind: 'digital', ios_store_product_id: 'premium_monthly' },
      });
      expect(refused).toMatchObject({
        state: 'error',
        lane: 'store',
        reason: 'purchase_registration_failed',
        error: { status: 409, serviceCode: 'purchase_token_reused' },
      });
    } finally {
      Billing.reset();
    }
  });
});
