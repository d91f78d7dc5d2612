import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRemoteJWKSet, decodeProtectedHeader, errors as joseErrors, jwtVerify } from 'jose';
import { upsertEntitlement } from '../../db/entitlements';
import { upsertStoreSubscription } from '../../db/subscriptions';
import { createTenant } from '../../db/tenants';
import { withTenant } from '../../db/tenant-tx';
import { createKnex } from '../../db/knex';
import { loginRoleUrl } from '../../db/login-role';
import { signingKeys } from '../../db/signing-key-service';
import type { EntitlementState } from '../../domain/entitlement';
import { createVault, generateMasterKey } from '../../vault/vault';
import { call, startApi } from '../helpers/api';
import { scratchDatabase } from '../helpers/scratch-db';
import { until } from '../helpers/until';
import { Billing, EntitlementTokenError, MemoryStorage, verifyEntitlementToken } from '../../sdk/src/index';

/**
 * GET /v1/sdk/subscribers/{id}/token (docs/entitlement-tokens.md): the premium check's answer,
 * signed. Every check here verifies with jose's `jwtVerify` against the JWKS URL, as a tenant's
 * backend would, never with the service's own code. Its own database: the signing keys are the
 * deployment's, and this file rotates them.
 */
describe('entitlement tokens', () => {
  const vault = createVault(generateMasterKey());
  let db: Awaited<ReturnType<typeof scratchDatabase>>;
  let api: Awaited<ReturnType<typeof startApi>>;
  let jwks: ReturnType<typeof createRemoteJWKSet>;
  beforeAll(async () => {
    db = await scratchDatabase('tokens');
    api = await startApi({ db: db.app, vault });
    jwks = createRemoteJWKSet(new URL(`${api.apiRoot}/.well-known/jwks.json`));
  }, 120_000);
  afterAll(async () => {
    await api?.close();
    await db?.drop();
  });

  const issuer = () => api.services.config.publicApiUrl;
  const tenant = async () => {
    const t = await createTenant(db.owner, { name: `tokens-${crypto.randomBytes(3).toString('hex')}` });
    const app = await db.owner('apps').where({ id: t.app_id }).first();
    return { ...t, live_key: app.publishable_key_live as string };
  };
  type T = Awaited<ReturnType<typeof tenant>>;
  const entitle = (
    t: T,
    user: string,
    e: {
      state?: EntitlementState;
      expiresAt?: string | null;
      graceUntil?: string | null;
      live?: boolean;
      provider?: 'store_android' | 'psp_a';
    } = {},
  ) =>
    withTenant(db.app, t.tenant_id, async (trx) => {
      const subscriptionId = await upsertStoreSubscription(trx, {
        tenantId: t.tenant_id,
        provider: e.provider ?? 'store_android',
        externalId: `sub_${crypto.randomUUID()}`,
        status: 'active',
        mode: e.live ? 'live' : 'test',
        appUserId: user,
        productId: null,
        currentPeriodEnd: null,
        storeReadAt: new Date().toISOString(),
      });
      const write = (state: EntitlementState, expiresAt: string | null, graceUntil: string | null) =>
        upsertEntitlement(trx, {
          tenantId: t.tenant_id,
          appUserId: user,
          provider: e.provider ?? 'store_android',
          productId: null,
          subscriptionId,
          state,
          isSandbox: !e.live,
          expiresAt,
          graceUntil,
        });
      const id = await write(e.state ?? 'active', e.expiresAt ?? null, e.graceUntil ?? null);
      return { id: id!, subscriptionId };
    });
  const setState = (t: T, subscriptionId: string, state: EntitlementState) =>
    withTenant(db.app, t.tenant_id, (trx) =>
      trx('entitlements').where({ subscription_id: subscriptionId }).update({ state }),
    );
  const fetchToken = (key: string, user: string, query = '') =>
    call(api.apiRoot, `/v1/sdk/subscribers/${encodeURIComponent(user)}/token${query}`, key);
  const verify = (token: string, aud: string, opts: { currentDate?: Date; clockTolerance?: number } = {}) =>
    jwtVerify(token, jwks, {
      issuer: issuer(),
      audience: aud,
      algorithms: ['EdDSA'],
      typ: 'entitlements+jwt',
      ...opts,
    });

  it('a premium user’s token verifies with a stock JWT library against the JWKS URL: header, iss, aud, sub, claims, 24 h', async () => {
    const t = await tenant();
    const { id } = await entitle(t, 'buyer');
    const before = Math.floor(Date.now() / 1000);
    const r = await fetchToken(t.publishable_key, 'buyer');
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['expires_at', 'token']);
    const header = decodeProtectedHeader(r.body.token);
    expect(header).toEqual({ alg: 'EdDSA', kid: expect.any(String), typ: 'entitlements+jwt' });
    const { payload } = await verify(r.body.token, `${t.tenant_id}:test`);
    expect(payload).toEqual({
      iss: issuer(),
      aud: `${t.tenant_id}:test`,
      sub: 'buyer',
      tenant_id: t.tenant_id,
      mode: 'test',
      premium: true,
      entitlements: [{ id, expires_at: null }],
      active_entitlements: ['premium'],
      iat: expect.any(Number),
      exp: expect.any(Number),
    });
    expect(payload.iat).toBeGreaterThanOrEqual(before);
    expect(payload.exp! - payload.iat!).toBe(24 * 3600);
    expect(r.body.expires_at).toBe(new Date(payload.exp! * 1000).toISOString());
  });

  it('a user with no access gets a token saying so (premium false, nothing listed); expired entitlements are not listed', async () => {
    const t = await tenant();
    await entitle(t, 'lapsed', { state: 'expired', expiresAt: new Date(Date.now() - 86_400_000).toISOString() });
    const { payload } = await verify((await fetchToken(t.publishable_key, 'lapsed')).body.token, `${t.tenant_id}:test`);
    expect(payload).toMatchObject({ premium: false, entitlements: [], sub: 'lapsed' });
    const { payload: nobody } = await verify(
      (await fetchToken(t.publishable_key, 'nobody')).body.token,
      `${t.tenant_id}:test`,
    );
    expect(nobody).toMatchObject({ premium: false, entitlements: [] });
  });

  it('exp never outlives the access: an entitlement ending in an hour; a grace period (included) ending in two', async () => {
    const t = await tenant();
    const inHour = new Date(Date.now() + 3_600_000);
    const inTwo = new Date(Date.now() + 7_200_000);
    const second = (d: Date) => Math.floor(d.getTime() / 1000);
    const a = await entitle(t, 'ending', { expiresAt: inHour.toISOString() });
    const { payload } = await verify((await fetchToken(t.publishable_key, 'ending')).body.token, `${t.tenant_id}:test`);
    expect(payload.exp).toBe(second(inHour));
    expect(payload.entitlements).toEqual([{ id: a.id, expires_at: new Date(second(inHour) * 1000).toISOString() }]);
    const g = await entitle(t, 'in-grace', {
      state: 'grace_period',
      expiresAt: new Date(Date.now() - 60_000).toISOString(),
      graceUntil: inTwo.toISOString(),
    });
    const grace = await verify((await fetchToken(t.publishable_key, 'in-grace')).body.token, `${t.tenant_id}:test`);
    expect(grace.payload.exp).toBe(second(inTwo));
    expect(grace.payload.entitlements).toEqual([
      { id: g.id, expires_at: new Date(second(inTwo) * 1000).toISOString() },
    ]);
    // One second after the access ends the token is refused by the verifier's own clock.
    await expect(
      verify((await fetchToken(t.publishable_key, 'ending')).body.token, `${t.tenant_id}:test`, {
        currentDate: new Date(inHour.getTime() + 1000),
      }),
    ).rejects.toThrow(joseErrors.JWTExpired);
  });

  it('clock skew: a verifier whose clock runs ahead refuses an expired token unless it allows a tolerance', async () => {
    const t = await tenant();
    await entitle(t, 'skew', { expiresAt: new Date(Date.now() + 120_000).toISOString() });
    const { token } = (await fetchToken(t.publishable_key, 'skew')).body;
    const ahead = new Date(Date.now() + 150_000);
    await expect(verify(token, `${t.tenant_id}:test`, { currentDate: ahead })).rejects.toThrow(joseErrors.JWTExpired);
    await expect(
      verify(token, `${t.tenant_id}:test`, { currentDate: ahead, clockTolerance: 60 }),
    ).resolves.toBeDefined();
  });

  it('tampering fails: an edited claim, a token re-signed with a foreign key, a wrong audience or issuer', async () => {
    const t = await tenant();
    await entitle(t, 'victim', { state: 'expired' });
    const { token } = (await fetchToken(t.publishable_key, 'victim')).body;
    const [h, p, s] = token.split('.');
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString());
    const edited = Buffer.from(JSON.stringify({ ...claims, premium: true })).toString('base64url');
    await expect(verify([h, edited, s].join('.'), `${t.tenant_id}:test`)).rejects.toThrow(
      joseErrors.JWSSignatureVerificationFailed,
    );
    const { SignJWT, generateKeyPair } = await import('jose');
    const foreign = await generateKeyPair('Ed25519');
    const forged = await new SignJWT({ ...claims, premium: true })
      .setProtectedHeader({ alg: 'EdDSA', kid: decodeProtectedHeader(token).kid, typ: 'entitlements+jwt' })
      .sign(foreign.privateKey);
    await expect(verify(forged, `${t.tenant_id}:test`)).rejects.toThrow(joseErrors.JWSSignatureVerificationFailed);
    await expect(verify(token, `${t.tenant_id}:live`)).rejects.toThrow(joseErrors.JWTClaimValidationFailed);
    await expect(
      jwtVerify(token, jwks, { issuer: 'https://elsewhere.example', audience: `${t.tenant_id}:test` }),
    ).rejects.toThrow(joseErrors.JWTClaimValidationFailed);
  });

  it('tenant isolation: another tenant’s key never obtains a premium token for this tenant’s user, and its tokens carry its own aud', async () => {
    const a = await tenant();
    const b = await tenant();
    await entitle(a, 'shared-name');
    const fromB = (await fetchToken(b.publishable_key, 'shared-name')).body.token;
    const { payload } = await verify(fromB, `${b.tenant_id}:test`);
    expect(payload).toMatchObject({ tenant_id: b.tenant_id, premium: false, entitlements: [] });
    await expect(verify(fromB, `${a.tenant_id}:test`)).rejects.toThrow(joseErrors.JWTClaimValidationFailed);
    // Test and live are apart too: the live key states live access only.
    const live = (await fetchToken(a.live_key, 'shared-name')).body.token;
    expect((await verify(live, `${a.tenant_id}:live`)).payload).toMatchObject({ mode: 'live', premium: false });
  });

  it('a refund changes every token issued after it', async () => {
    const t = await tenant();
    const { subscriptionId } = await entitle(t, 'refunded');
    const first = await verify((await fetchToken(t.publishable_key, 'refunded')).body.token, `${t.tenant_id}:test`);
    expect(first.payload.premium).toBe(true);
    await setState(t, subscriptionId, 'revoked');
    const after = await verify((await fetchToken(t.publishable_key, 'refunded')).body.token, `${t.tenant_id}:test`);
    expect(after.payload).toMatchObject({ premium: false, entitlements: [] });
  });

  it('outbound webhooks say when an earlier token became wrong: a refund sets token_invalidated, the grant of access does not', async () => {
    const t = await tenant();
    // An endpoint (fixture, as the owner): events are recorded only for a tenant that has one.
    await db.owner('webhook_endpoints').insert({
      tenant_id: t.tenant_id,
      url: 'https://hooks.example/billing',
      secret_enc: 'v1:fixture',
      task_queue: 'fixture-queue',
    });
    const { subscriptionId } = await entitle(t, 'hooked', {
      expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
    });
    await setState(t, subscriptionId, 'revoked');
    const events = await db
      .owner('outbound_events')
      .where({ tenant_id: t.tenant_id })
      .orderBy('created_at')
      .select('type', 'body');
    const data = events.map((e) => [e.type, e.body.data.token_invalidated]);
    expect(data).toEqual(
      expect.arrayContaining([
        ['entitlement.active', false],
        ['entitlement.revoked', true],
      ]),
    );
  });

  /** The held token request is in the waiters' registry: a write from now on must wake it. */
  const tokenWaiting = (tenantId: string) =>
    until(
      'the token request to wait',
      async () =>
        (await import('../../api/sdk/entitlement-waits')).entitlementWaits(api.services)!.stats(tenantId).waiting,
      (n) => n === 1,
    );

  it('wait_for=premium holds the token until the purchase commits, like the premium check', async () => {
    const t = await tenant();
    const pending = fetchToken(t.publishable_key, 'waiter', '?wait_for=premium&timeout_ms=15000');
    await tokenWaiting(t.tenant_id);
    await entitle(t, 'waiter');
    const r = await pending;
    expect(r.status).toBe(200);
    expect((await verify(r.body.token, `${t.tenant_id}:test`)).payload.premium).toBe(true);
  });

  it('wait_for=premium on the token wakes on a write under another id of the customer (an anonymous id signed in)', async () => {
    const t = await tenant();
    const anon = `$RCAnonymousID:${crypto.randomBytes(16).toString('hex')}`;
    const identify = { method: 'POST', body: JSON.stringify({ new_app_user_id: 'token-user' }) };
    const path = `/v1/sdk/subscribers/${encodeURIComponent(anon)}/identify`;
    expect((await call(api.apiRoot, path, t.publishable_key, identify)).status).toBe(200);
    const started = Date.now();
    const pending = fetchToken(t.publishable_key, anon, '?wait_for=premium&timeout_ms=20000');
    await tokenWaiting(t.tenant_id);
    await entitle(t, 'token-user');
    const { status, body } = await pending;
    expect(status).toBe(200);
    expect((await verify(body.token, `${t.tenant_id}:test`)).payload.premium).toBe(true);
    // Woken by the commit, not by the timeout's fallback re-read.
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('rotation keeps tokens issued before valid and signs new ones with the new kid', async () => {
    const t = await tenant();
    await entitle(t, 'rotating');
    const old = (await fetchToken(t.publishable_key, 'rotating')).body.token;
    const { kid } = await signingKeys(db.app, vault).rotate();
    const fresh = (await fetchToken(t.publishable_key, 'rotating')).body.token;
    expect(decodeProtectedHeader(fresh).kid).toBe(kid);
    expect(decodeProtectedHeader(old).kid).not.toBe(kid);
    // A fresh remote key set, as a verifier that has never fetched: both kids are published.
    const remote = createRemoteJWKSet(new URL(`${api.apiRoot}/.well-known/jwks.json`));
    const opts = { issuer: issuer(), audience: `${t.tenant_id}:test` };
    await expect(jwtVerify(old, remote, opts)).resolves.toBeDefined();
    await expect(jwtVerify(fresh, remote, opts)).resolves.toBeDefined();
  });

  it('a key withdrawn or rotated by another process signs nothing more from its commit on, though this api has it open', async () => {
    const t = await tenant();
    await entitle(t, 'withdrawn');
    // The admin CLI's process: its own database handle, so its own signing service and key cache.
    const cli = createKnex(loginRoleUrl(db.url), { max: 1 });
    try {
      const before = (await fetchToken(t.publishable_key, 'withdrawn')).body.token;
      const kid = decodeProtectedHeader(before).kid!;
      const w = await signingKeys(cli, vault).withdraw(kid);
      expect(w?.new_signer).toEqual(expect.any(String));
      const after = (await fetchToken(t.publishable_key, 'withdrawn')).body.token;
      expect(decodeProtectedHeader(after).kid).toBe(w!.new_signer);
      const remote = createRemoteJWKSet(new URL(`${api.apiRoot}/.well-known/jwks.json`));
      const opts = { issuer: issuer(), audience: `${t.tenant_id}:test` };
      await expect(jwtVerify(before, remote, opts)).rejects.toThrow(joseErrors.JWKSNoMatchingKey);
      await expect(jwtVerify(after, remote, opts)).resolves.toBeDefined();
      const r = await signingKeys(cli, vault).rotate();
      expect(r.retired).toBe(w!.new_signer);
      expect(decodeProtectedHeader((await fetchToken(t.publishable_key, 'withdrawn')).body.token).kid).toBe(r.kid);
    } finally {
      await cli.destroy();
    }
  });

  it('refuses without a publishable key, a secret key, and an overlong id, in the error shape', async () => {
    const t = await tenant();
    expect((await fetchToken('', 'x')).status).toBe(401);
    expect((await fetchToken(t.secret_key, 'x')).status).toBe(401);
    const long = await fetchToken(t.publishable_key, 'x'.repeat(201));
    expect(long.status).toBe(400);
    expect(long.body).toMatchObject({ error: 'invalid_request', param: 'app_user_id' });
  });

  it('the SDK’s server-side helper verifies a real token against the JWKS URL and refuses edits, foreign keys and other audiences', async () => {
    const t = await tenant();
    await entitle(t, 'helper');
    const { token } = (await fetchToken(t.publishable_key, 'helper')).body;
    const jwksUrl = `${api.apiRoot}/.well-known/jwks.json`;
    const aud = `${t.tenant_id}:test`;
    const claims = await verifyEntitlementToken(token, { jwksUrl, audience: aud, issuer: issuer() });
    expect(claims).toMatchObject({ sub: 'helper', premium: true, tenant_id: t.tenant_id });
    const reason = (p: Promise<unknown>) =>
      p.then(
        () => 'accepted',
        (e: EntitlementTokenError) => e.reason,
      );
    const [h, p, sig] = token.split('.');
    const edited = Buffer.from(JSON.stringify({ ...claims, sub: 'someone-else' })).toString('base64url');
    expect(await reason(verifyEntitlementToken([h, edited, sig].join('.'), { jwksUrl, audience: aud }))).toBe(
      'bad_signature',
    );
    expect(await reason(verifyEntitlementToken(token, { jwksUrl, audience: `${t.tenant_id}:live` }))).toBe(
      'wrong_audience',
    );
    expect(await reason(verifyEntitlementToken(token, { jwks: { keys: [] }, audience: aud }))).toBe('unknown_key');
    expect(await reason(verifyEntitlementToken(token, { jwksUrl, audience: aud, now: (claims.exp + 61) * 1000 }))).toBe(
      'expired',
    );
    expect(await reason(verifyEntitlementToken(p, { jwksUrl, audience: aud }))).toBe('malformed');
  });

  it('the SDK keeps the latest token beside its cache and refuses a cached answer edited to say premium', async () => {
    const t = await tenant();
    const storage = new MemoryStorage();
    Billing.reset();
    const billing = Billing.configure({
      publishableKey: t.publishable_key,
      backend: api.apiRoot,
      appUserId: 'editor',
      platform: 'web',
      storage,
    });
    try {
      expect(await billing.getEntitlements()).toMatchObject({ isPremium: false, verified: false });
      const token = await billing.entitlementToken();
      expect(await billing.entitlementToken()).toBe(token); // kept, not fetched again
      expect(await billing.getEntitlements()).toMatchObject({ isPremium: false, verified: true });
      // Someone edits the cached answer (localStorage on the web) to unlock premium.
      const key = `billing.v2:subscriber:${t.publishable_key}:editor`;
      const cached = JSON.parse(storage.getItem(key)!);
      storage.setItem(key, JSON.stringify({ ...cached, value: { ...cached.value, isPremium: true } }));
      const answer = await billing.getEntitlements();
      expect(answer).toMatchObject({ isPremium: false, stale: false });
      expect(JSON.parse(storage.getItem(key)!).value.isPremium).toBe(false);
    } finally {
      Billing.reset();
    }
  });
});
