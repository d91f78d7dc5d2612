import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT, decodeProtectedHeader, errors as joseErrors, generateKeyPair } from 'jose';
import { entitlementVerifier } from '../../examples/verify-token/node';
import { call, startApi } from '../helpers/api';
import { makeEntitlement, makeTenant } from '../helpers/factories';

const run = promisify(execFile);
const EXAMPLES = path.resolve('examples/verify-token');

/** A runtime on PATH, or at the place CI installs it; null when this machine has none. */
function which(name: string, fallbacks: string[]): string | null {
  const dirs = (process.env.PATH ?? '').split(path.delimiter).filter(Boolean);
  return [...dirs.map((d) => path.join(d, name)), ...fallbacks].find((p) => fs.existsSync(p)) ?? null;
}

type Outcome = 'ok' | string;

/**
 * The copyable verifiers of examples/verify-token (docs/entitlement-tokens.md, "Verifying in your
 * backend"), each run against tokens the real service minted and published keys it serves: Node
 * (jose), Python (cryptography) and Go (standard library). One table of tokens and the outcome
 * each must give (accepted, or the reason it is refused); every runtime gives the same answers.
 */
describe('the token verification examples', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let audience: string;
  const cases: { name: string; token: string; now?: number; aud?: string; want: Outcome }[] = [];
  const goBin = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'verify-token-')), 'verify-token');
  const pythonOnPath = which('python3', ['/root/.pyenv/shims/python3', '/usr/bin/python3']);
  let python: string | null = null;
  let noPython = 'no python3 on this machine';
  const go = which('go', ['/usr/local/go/bin/go']);
  /** The build's failure, if it failed (awaited by the Go test alone). */
  let goBuilt: Promise<unknown> = Promise.resolve(null);

  beforeAll(async () => {
    // Built while the service starts; the build cache is the user's (GOCACHE), so it is quick after the first.
    if (go)
      goBuilt = run(go, ['build', '-o', goBin, '.'], {
        cwd: path.join(EXAMPLES, 'go'),
        env: { ...process.env, GOFLAGS: '-mod=mod', GOTOOLCHAIN: 'local' },
      }).then(
        () => null,
        (e: Error) => e,
      );
    // The interpreter itself, not a version manager's shim in front of it (half a second a run),
    // once it has the one package the example needs.
    if (pythonOnPath)
      python = await run(pythonOnPath, ['-c', 'import sys, cryptography; print(sys.executable)']).then(
        (r) => r.stdout.trim() || pythonOnPath,
        () => ((noPython = `${pythonOnPath} has no cryptography package (pip install cryptography)`), null),
      );
    api = await startApi();
    // The tokens' `iss` is the deployment's public URL: here, where this listener answers.
    api.services.config.publicApiUrl = api.apiRoot;
    const t = await makeTenant('verify-examples');
    const other = await makeTenant('verify-examples-other');
    audience = `${t.tenant_id}:test`;
    const endsSoon = new Date(Date.now() + 120_000).toISOString();
    await makeEntitlement(t.tenant_id, { appUserId: 'premium' });
    await makeEntitlement(t.tenant_id, { appUserId: 'ending', expiresAt: endsSoon });
    const mint = async (user: string) =>
      (await call(api.apiRoot, `/v1/sdk/subscribers/${user}/token`, t.publishable_key)).body.token as string;
    const premium = await mint('premium');
    const ending = await mint('ending');
    const nobody = await mint('nobody');
    // A token minted while the deployment named another public URL: every key checks out, `iss` does not.
    api.services.config.publicApiUrl = 'https://elsewhere.example';
    const elsewhere = await mint('premium');
    api.services.config.publicApiUrl = api.apiRoot;
    const exp = JSON.parse(Buffer.from(ending.split('.')[1], 'base64url').toString()).exp as number;
    const [h, p] = premium.split('.');
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString());
    const foreign = await generateKeyPair('Ed25519');
    const forge = (kid: string) =>
      new SignJWT(claims).setProtectedHeader({ alg: 'EdDSA', kid, typ: 'entitlements+jwt' }).sign(foreign.privateKey);
    const nobodyClaims = JSON.parse(Buffer.from(nobody.split('.')[1], 'base64url').toString());
    const unlocked = Buffer.from(JSON.stringify({ ...nobodyClaims, premium: true })).toString('base64url');
    cases.push(
      { name: 'a premium user’s token', token: premium, want: 'ok' },
      { name: 'a token saying not premium', token: nobody, want: 'ok' },
      {
        name: 'an edited claim',
        token: [nobody.split('.')[0], unlocked, nobody.split('.')[2]].join('.'),
        want: 'bad_signature',
      },
      {
        name: 'signed by a foreign key under the real kid',
        token: await forge(decodeProtectedHeader(premium).kid!),
        want: 'bad_signature',
      },
      { name: 'signed by a key never published', token: await forge('not-a-published-kid'), want: 'unknown_key' },
      { name: 'the signature of another token', token: [h, p, ending.split('.')[2]].join('.'), want: 'bad_signature' },
      { name: 'within the clock skew after exp', token: ending, now: exp + 30, want: 'ok' },
      { name: 'past exp and the skew', token: ending, now: exp + 61, want: 'expired' },
      { name: 'checked for live mode', token: premium, aud: `${t.tenant_id}:live`, want: 'wrong_audience' },
      { name: 'checked for another tenant', token: premium, aud: `${other.tenant_id}:test`, want: 'wrong_audience' },
      { name: 'minted for another public URL', token: elsewhere, want: 'wrong_issuer' },
    );
  }, 120_000);
  afterAll(async () => {
    await api?.close();
    fs.rmSync(path.dirname(goBin), { recursive: true, force: true });
  });

  const expected = () => cases.map((c) => [c.name, c.want]);
  /** Every case through one verifier (`check(token, aud, now?)` → 'ok' or the reason). */
  const table = (check: (token: string, aud: string, now?: number) => Promise<Outcome>) =>
    Promise.all(cases.map(async (c) => [c.name, await check(c.token, c.aud ?? audience, c.now)]));
  /** The verifier answered the token's own claims (who, and whether premium). */
  const same = (token: string, claims: { sub?: unknown; premium?: unknown }) => {
    const signed = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
    return claims.sub === signed.sub && claims.premium === signed.premium;
  };
  /** A script's verdict: its claims on stdout (checked against the token's own) or its reason on stderr. */
  const cli = (cmd: string, args: string[]) => async (token: string, aud: string, now?: number) => {
    try {
      const { stdout } = await run(cmd, [...args, api.apiRoot, aud, token, ...(now ? [String(now)] : [])]);
      return same(token, JSON.parse(stdout)) ? 'ok' : `other claims: ${stdout}`;
    } catch (e) {
      return (e as { stderr?: string }).stderr?.trim() || String(e);
    }
  };

  it('Node (jose): examples/verify-token/node.ts', async () => {
    const reason = (e: unknown) =>
      e instanceof joseErrors.JWSSignatureVerificationFailed
        ? 'bad_signature'
        : e instanceof joseErrors.JWKSNoMatchingKey
          ? 'unknown_key'
          : e instanceof joseErrors.JWTExpired
            ? 'expired'
            : e instanceof joseErrors.JWTClaimValidationFailed
              ? `wrong_${e.claim === 'aud' ? 'audience' : e.claim === 'iss' ? 'issuer' : e.claim}`
              : String(e);
    const check = new Map<string, ReturnType<typeof entitlementVerifier>>();
    const got = await table(async (token, aud, now) => {
      if (!check.has(aud)) check.set(aud, entitlementVerifier(api.apiRoot, aud));
      return check.get(aud)!(token, now === undefined ? undefined : new Date(now * 1000)).then(
        (claims) => (same(token, claims) ? 'ok' : `other claims: ${JSON.stringify(claims)}`),
        reason,
      );
    });
    expect(got).toEqual(expected());
  });

  it('Python (cryptography): examples/verify-token/verify.py', async (ctx) => {
    if (!python) return ctx.skip(noPython);
    expect(await table(cli(python, [path.join(EXAMPLES, 'verify.py')]))).toEqual(expected());
  });

  it('Go (standard library): examples/verify-token/go', async (ctx) => {
    if (!go) return ctx.skip('no Go toolchain on this machine');
    const failed = await goBuilt;
    if (failed) throw failed;
    expect(await table(cli(goBin, []))).toEqual(expected());
  });
});
