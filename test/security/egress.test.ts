import crypto from 'node:crypto';
import http from 'node:http';
import type net from 'node:net';
import { Linter } from 'eslint';
import tseslint from 'typescript-eslint';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getConnectionSafe } from '../../db/connections';
import { createConnection, updateConnectionSecrets } from '../../db/connection-service';
import { startEmulator, type RunningEmulator } from '../../emulators/common/host';
import { createEmulator } from '../../emulators/store_android/emulator';
import { withTenant } from '../../db/tenant-tx';
import { EgressError, egressRequest } from '../../egress/request';
import { credentialRefusal } from '../../providers/credential-check';
import { fetchAccessToken, parseServiceAccount } from '../../providers/store_android/auth';
import { GOOGLE_TOKEN_URIS } from '../../providers/store_android/token-endpoint';
import { createEmulatorAccount } from '../../seed/demo-providers';
import { startConnectionProof } from '../../temporal/workflow-starts';
import { appDb, testDb } from '../helpers/db';
import { createActivities } from '../../activities';
import { createAdapters } from '../../providers';
import { newTenant } from '../helpers/api';
import { startStoreStack, type StoreStack } from '../helpers/stores';

/**
 * Issue #28, item 1: a tenant pastes a Play service-account JSON whose token_uri points at an
 * internal listener. The review's probe: the listener got `POST /token`, answered 307, got
 * `POST /redirected`, and its marker came back to the tenant. Here the same listener runs on
 * loopback and every path that used to reach it (the proof, an SDK store registration, the token
 * grant itself) is driven for real.
 */
const MARKER = `internal-secret-${crypto.randomBytes(6).toString('hex')}`;

interface Hit {
  method: string;
  path: string;
}

async function hostileListener() {
  const hits: Hit[] = [];
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      hits.push({ method: req.method ?? '', path: req.url ?? '' });
      if (req.url === '/token')
        return res.writeHead(307, { location: '/redirected', 'content-type': 'text/plain' }).end(`moved ${MARKER}`);
      if (req.url === '/refuse')
        return res
          .writeHead(400, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: 'invalid_grant', error_description: MARKER }));
      if (req.url === '/refuse-odd')
        return res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: MARKER }));
      if (req.url === '/big')
        return res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ access_token: 'x', pad: MARKER.repeat(20_000) }));
      if (req.url === '/slow') return setTimeout(() => res.writeHead(200).end('{}'), 3_000);
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ access_token: MARKER, expires_in: 3600 }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  return { hits, origin, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe('egress: one guarded way out', () => {
  let l: Awaited<ReturnType<typeof hostileListener>>;
  let play: RunningEmulator;
  const playEmulatorUrl = async () => play.url;
  beforeAll(async () => {
    l = await hostileListener();
    play = await startEmulator(createEmulator, { port: 0 });
  });
  afterAll(async () => {
    await l?.close();
    await play?.close();
  });

  it('a private destination is refused before connecting unless the policy allows it; a redirect is handed back, never followed', async () => {
    const policy = { allowPrivate: false, timeoutMs: 2_000, maxResponseBytes: 1024 };
    const before = l.hits.length;
    const refused = await egressRequest(`${l.origin}/token`, { method: 'POST', body: 'x' }, policy).catch((e) => e);
    expect(refused).toBeInstanceOf(EgressError);
    expect([refused.kind, refused.message]).toEqual([
      'refused_address',
      'the destination is a private, loopback, link-local or reserved address',
    ]);
    // `localhost` resolves to loopback: refused at connect time, by the lookup, too.
    const byName = await egressRequest(
      `${l.origin.replace('127.0.0.1', 'localhost')}/token`,
      { method: 'POST' },
      policy,
    ).catch((e) => e);
    expect(byName.kind).toBe('refused_address');
    expect(l.hits.length).toBe(before);

    const answer = await egressRequest(
      `${l.origin}/token`,
      { method: 'POST', body: 'x' },
      { ...policy, allowPrivate: true },
    );
    expect(answer.status).toBe(307);
    expect(l.hits.slice(before)).toEqual([{ method: 'POST', path: '/token' }]);
  });

  it('answers are bounded in size and time, and a failure never carries the remote text', async () => {
    const policy = { allowPrivate: true, timeoutMs: 500, maxResponseBytes: 4096 };
    const big = await egressRequest(`${l.origin}/big`, { method: 'GET' }, policy).catch((e) => e);
    expect([big.kind, big.message]).toEqual(['too_large', 'the answer was larger than allowed']);
    const cut = await egressRequest(`${l.origin}/big`, { method: 'GET' }, { ...policy, oversize: 'truncate' });
    expect([cut.truncated, cut.body.length]).toEqual([true, 4096]);
    const slow = await egressRequest(`${l.origin}/slow`, { method: 'GET' }, policy).catch((e) => e);
    expect([slow.kind, slow.name]).toEqual(['timeout', 'TimeoutError']);
    for (const e of [big, slow]) expect(String(e.message)).not.toContain(MARKER);
    const bad = await egressRequest('file:///etc/passwd', { method: 'GET' }, policy).catch((e) => e);
    expect(bad.kind).toBe('bad_url');
  });

  it("a token_uri that is neither Google's nor on the operator's Play host is refused when saved, naming the field, and never called", async () => {
    const app = await createEmulatorAccount(await playEmulatorUrl());
    const hostile = withTokenUri(app.credentials.test.service_account_json, `${l.origin}/token`);
    const before = l.hits.length;
    const refusal = credentialRefusal(
      'store_android',
      { service_account_json: hostile },
      'https://androidpublisher.googleapis.com',
    );
    expect(refusal).toMatch(/^The service-account JSON has a token_uri that is not Google's token endpoint/);
    // Google's own and the operator's host pass.
    for (const uri of GOOGLE_TOKEN_URIS)
      expect(
        credentialRefusal(
          'store_android',
          { service_account_json: withTokenUri(hostile, uri) },
          'https://androidpublisher.googleapis.com',
        ),
      ).toBeNull();
    expect(credentialRefusal('store_android', { service_account_json: hostile }, l.origin)).toBeNull();
    // Look-alikes do not.
    for (const uri of [
      'https://oauth2.googleapis.com.evil.test/token',
      'https://oauth2.googleapis.com/token?x=1',
      'http://oauth2.googleapis.com/token',
      'https://user@oauth2.googleapis.com/token',
    ]) {
      expect([
        uri,
        credentialRefusal(
          'store_android',
          { service_account_json: withTokenUri(hostile, uri) },
          'https://androidpublisher.googleapis.com',
        ),
      ]).toEqual([uri, expect.stringContaining('not Google')]);
    }
    // A grant with such a credential stops before any request.
    const err = await fetchAccessToken(
      parseServiceAccountLoose(hostile),
      2_000,
      'https://androidpublisher.googleapis.com',
    ).catch((e) => e);
    expect(err.reason).toMatch(/not Google's token endpoint/);
    expect(l.hits.length).toBe(before);
  });

  it("on the operator's own token host: the 307 is not followed, and neither a refusal's text nor an odd error code is repeated", async () => {
    const app = await createEmulatorAccount(await playEmulatorUrl());
    const sa = (path: string) =>
      parseServiceAccount(withTokenUri(app.credentials.test.service_account_json, `${l.origin}${path}`), l.origin);
    const before = l.hits.length;
    const moved = await fetchAccessToken(sa('/token'), 2_000, l.origin).catch((e) => e);
    expect(moved.reason).toBe('token endpoint answered HTTP 307 (redirects are not followed)');
    expect(l.hits.slice(before).map((h) => h.path)).toEqual(['/token']);
    const refused = await fetchAccessToken(sa('/refuse'), 2_000, l.origin).catch((e) => e);
    expect(refused.reason).toBe('token endpoint refused the service account (HTTP 400, invalid_grant)');
    const odd = await fetchAccessToken(sa('/refuse-odd'), 2_000, l.origin).catch((e) => e);
    expect(odd.reason).toBe('token endpoint refused the service account (HTTP 401)');
    const big = await fetchAccessToken(sa('/big'), 2_000, l.origin).catch((e) => e);
    expect(big.reason).toBe('token endpoint answered with more than a token');
    for (const e of [moved, refused, odd, big])
      expect(JSON.stringify({ m: e.message, r: e.reason, c: e.opts })).not.toContain(MARKER);
  });

  describe('through the service: the proof, an SDK store registration and the voided-purchase sweep', () => {
    let s: StoreStack;
    beforeAll(async () => {
      s = await startStoreStack('egress-play');
    });
    afterAll(async () => s?.close());

    it('a stored credential pointing at an internal listener: the proof and the sweep fail with a fixed reason, registration answers without the marker, the listener hears nothing', async () => {
      const T = await newTenant('egress-hostile');
      const app = await createEmulatorAccount(s.emulators.store_android.url);
      const hostile = withTokenUri(app.credentials.test.service_account_json, `${l.origin}/token`);
      // Written straight to the vault, as a credential saved before the save-time check would be.
      const c = await withTenant(testDb(), T.tenant_id, (trx) =>
        createConnection(trx, s.worker.vault, {
          provider: 'store_android',
          account_ref: app.account,
          credentials: { test: { service_account_json: hostile } } as never,
        }),
      );
      const before = l.hits.length;
      await (
        await startConnectionProof(s.worker.client, s.worker.taskQueue, T.tenant_id, c.id, crypto.randomUUID())
      ).result();
      const proven = await withTenant(testDb(), T.tenant_id, (trx) => getConnectionSafe(trx, c.id));
      expect(proven!.verified_at).toBeNull();
      expect(proven!.proof_error).toMatch(/token_uri that is not Google's token endpoint/);
      expect(proven!.proof_error).not.toContain(MARKER);

      // The stack's own tenant: its Play connection swapped to the hostile JSON, then a registration.
      const playConnection = await withTenant(testDb(), s.tenant.tenant_id, async (trx) => {
        const conn = await trx('provider_connections').where({ provider: 'store_android' }).first('id');
        await updateConnectionSecrets(trx, s.worker.vault, conn.id, {
          // Both modes: the registration reads in test mode, the sweep in live when there is a live credential.
          credentials: { test: { service_account_json: hostile }, live: { service_account_json: hostile } } as never,
        });
        return conn.id as string;
      });
      const { purchase_token } = await s.control.store_android<{ purchase_token: string }>(
        'POST',
        '/sandbox-purchase',
        { product_id: 'premium_monthly', account: s.accounts.store_android },
      );
      const r = await s.register({
        app_user_id: 'egress_user',
        provider: 'store_android',
        plan_id: 'premium_monthly',
        product_id: 'premium_monthly',
        purchase_token,
      });
      expect(r.status).toBeLessThan(500);
      expect(JSON.stringify(r.body)).not.toContain(MARKER);
      expect(l.hits.length).toBe(before);

      // The voided-purchase sweep's round for that connection: the worker's own activity, as the
      // sweep workflow runs it. It fails with the fixed reason, and the listener still hears nothing.
      const activities = createActivities({
        db: appDb(),
        config: s.worker.config,
        vault: s.worker.vault,
        adapters: createAdapters(s.worker.config),
      });
      const sweep = await activities
        .listVoidedStorePurchases({
          tenantId: s.tenant.tenant_id,
          provider: 'store_android',
          connectionId: playConnection,
          sinceMs: Date.now() - 86_400_000,
          max: 100,
        })
        .then(
          () => undefined,
          (e) => e as Error,
        );
      expect(sweep?.message).toMatch(/token_uri that is not Google's token endpoint/);
      expect(String(sweep?.message)).not.toContain(MARKER);
      expect(l.hits.length).toBe(before);
    });
  });

  it('the lint rule keeps bare fetch and http clients out of provider, activity and request code', async () => {
    // @ts-expect-error: the ESLint config is plain JavaScript, without declarations.
    const config = (await import('../../eslint.config.js')).default as Linter.Config[];
    const guard = config.find((c) => c.rules?.['no-restricted-globals'] && c.rules?.['no-restricted-imports']);
    expect(guard?.files).toEqual(
      expect.arrayContaining(['providers/**/*.ts', 'activities/**/*.ts', 'workflows/**/*.ts', 'api/**/*.ts']),
    );
    const linter = new Linter({ configType: 'flat' });
    const lint = (code: string, file: string) =>
      linter
        .verify(code, [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser }, rules: guard!.rules }], file)
        .map((m) => m.ruleId);
    expect(lint("export const f = () => fetch('http://x/');\n", 'providers/psp_b/probe.ts')).toContain(
      'no-restricted-globals',
    );
    expect(lint("import https from 'node:https';\nexport const g = https;\n", 'activities/probe.ts')).toContain(
      'no-restricted-imports',
    );
    expect(lint("import { request } from 'undici';\nexport const h = request;\n", 'activities/probe.ts')).toContain(
      'no-restricted-imports',
    );
    expect(
      lint(
        "import { operatorHostFetch } from '../../egress/fetch';\nexport const k = operatorHostFetch;\n",
        'providers/psp_b/probe.ts',
      ),
    ).toEqual([]);
  });
});

function withTokenUri(json: string, tokenUri: string): string {
  return JSON.stringify({ ...JSON.parse(json), token_uri: tokenUri });
}

/** The grant's own guard, without the parse step's (which would refuse first). */
function parseServiceAccountLoose(json: string) {
  const sa = JSON.parse(json);
  return {
    client_email: sa.client_email,
    private_key: sa.private_key,
    private_key_id: sa.private_key_id,
    token_uri: sa.token_uri,
  };
}
