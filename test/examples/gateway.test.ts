import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT, decodeProtectedHeader, generateKeyPair } from 'jose';
import { toolPaths } from '../../runtime/config';
import { freePort } from '../../runtime/ports';
import { call, listen, startApi } from '../helpers/api';
import { makeEntitlement, makeProduct, makeTenant } from '../helpers/factories';
import { until } from '../helpers/until';

/** oauth2-proxy, built into the per-user tools cache by .ci/run (or `OAUTH2_PROXY_BIN`). */
const OAUTH2_PROXY = process.env.OAUTH2_PROXY_BIN || path.join(toolPaths().toolCacheDir, 'oauth2-proxy');
const RECIPE = path.resolve('examples/gateway/oauth2-proxy.cfg');
const available = fs.existsSync(OAUTH2_PROXY);

/**
 * The gateway recipe of docs/entitlement-tokens.md ("At an API gateway"), run as written:
 * examples/gateway/oauth2-proxy.cfg with only its placeholders filled in (the service's URL, the
 * tenant, the upstream, a cookie secret), in front of a backend that records what reaches it.
 * The tokens are the service's own, checked by oauth2-proxy against the published keys: only a
 * token of this tenant and side that unlocks `premium` gets through, with the app user named.
 */
describe.skipIf(!available)('the API gateway recipe: oauth2-proxy checks entitlement tokens', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let backend: Awaited<ReturnType<typeof listen>>;
  let proxy: ChildProcess;
  let proxyUrl: string;
  let log = '';
  const seen: { path: string; user: string | undefined }[] = [];
  const tokens: Record<string, string> = {};
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-recipe-'));

  beforeAll(async () => {
    api = await startApi();
    // The tokens' `iss` is the deployment's public URL: here, where this listener answers.
    api.services.config.publicApiUrl = api.apiRoot;
    const t = await makeTenant('gateway-recipe');
    const other = await makeTenant('gateway-recipe-other');
    const gold = await makeProduct(t.tenant_id, { entitlement: 'gold' });
    await makeEntitlement(t.tenant_id, { appUserId: 'premium_user' });
    await makeEntitlement(t.tenant_id, { appUserId: 'gold_user', productId: gold.id });
    await makeEntitlement(t.tenant_id, { appUserId: 'lapsed_user', state: 'expired' });
    await makeEntitlement(other.tenant_id, { appUserId: 'premium_user' });
    const mint = async (key: string, user: string) =>
      (await call(api.apiRoot, `/v1/sdk/subscribers/${user}/token`, key)).body.token as string;
    for (const user of ['premium_user', 'gold_user', 'lapsed_user', 'nobody'])
      tokens[user] = await mint(t.publishable_key, user);
    tokens.other_tenant = await mint(other.publishable_key, 'premium_user');
    const claims = JSON.parse(Buffer.from(tokens.premium_user.split('.')[1], 'base64url').toString());
    const foreign = await generateKeyPair('Ed25519');
    tokens.forged = await new SignJWT(claims)
      .setProtectedHeader({
        alg: 'EdDSA',
        kid: decodeProtectedHeader(tokens.premium_user).kid!,
        typ: 'entitlements+jwt',
      })
      .sign(foreign.privateKey);
    const nobody = tokens.nobody.split('.');
    const unlocked = {
      ...JSON.parse(Buffer.from(nobody[1], 'base64url').toString()),
      active_entitlements: ['premium'],
    };
    tokens.edited = [nobody[0], Buffer.from(JSON.stringify(unlocked)).toString('base64url'), nobody[2]].join('.');

    backend = await listen((req: http.IncomingMessage, res: http.ServerResponse) => {
      seen.push({ path: req.url ?? '', user: req.headers['x-forwarded-user'] as string | undefined });
      res.end('premium content');
    });
    const port = await freePort();
    proxyUrl = `http://127.0.0.1:${port}`;
    // The recipe as published; only what it says to replace is replaced.
    const config = fs
      .readFileSync(RECIPE, 'utf8')
      .replaceAll('https://billing.example.com', api.apiRoot.replace(/\/$/, ''))
      .replaceAll('TENANT_ID:live', `${t.tenant_id}:test`)
      .replace('127.0.0.1:4180', `127.0.0.1:${port}`)
      .replace('http://127.0.0.1:8080/', `${backend.url.replace(/\/$/, '')}/`)
      .replace('REPLACE_WITH_32_RANDOM_BYTES_BASE64URL', crypto.randomBytes(32).toString('base64url'));
    fs.writeFileSync(path.join(dir, 'oauth2-proxy.cfg'), config);
    proxy = spawn(OAUTH2_PROXY, ['--config', path.join(dir, 'oauth2-proxy.cfg')], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    proxy.stdout!.on('data', (d) => (log += d));
    proxy.stderr!.on('data', (d) => (log += d));
    await until(
      'oauth2-proxy answers',
      async () => {
        if (proxy.exitCode !== null) throw new Error(`oauth2-proxy exited ${proxy.exitCode}:\n${log}`);
        return fetch(`${proxyUrl}/ping`).then(
          (r) => r.status,
          () => 0,
        );
      },
      (status) => status === 200,
      30_000,
    );
  }, 120_000);

  afterAll(async () => {
    proxy?.kill('SIGKILL');
    await backend?.close();
    await api?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const through = async (token: string | null) => {
    const res = await fetch(`${proxyUrl}/premium/article`, {
      headers: token ? { Authorization: `Bearer ${token}` } : {},
    });
    return res.status;
  };

  it('a premium user’s token reaches the backend, which learns the app user', async () => {
    seen.length = 0;
    expect(await through(tokens.premium_user)).toBe(200);
    expect(seen).toEqual([{ path: '/premium/article', user: 'premium_user' }]);
  });

  it('a valid token that unlocks something else, or nothing, is refused (403); the backend sees nothing', async () => {
    seen.length = 0;
    expect({
      gold: await through(tokens.gold_user),
      lapsed: await through(tokens.lapsed_user),
      nobody: await through(tokens.nobody),
    }).toEqual({ gold: 403, lapsed: 403, nobody: 403 });
    expect(seen).toEqual([]);
  });

  it('no token, an edited one, a foreign key’s, or another tenant’s is refused (401); the backend sees nothing', async () => {
    seen.length = 0;
    expect({
      none: await through(null),
      edited: await through(tokens.edited),
      forged: await through(tokens.forged),
      other_tenant: await through(tokens.other_tenant),
    }).toEqual({ none: 401, edited: 401, forged: 401, other_tenant: 401 });
    expect(seen).toEqual([]);
  });
});
