import crypto from 'node:crypto';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  compactVerify,
  createLocalJWKSet,
  createRemoteJWKSet,
  decodeProtectedHeader,
  errors as joseErrors,
} from 'jose';
import type { Knex } from 'knex';
import { createKnex } from '../../db/knex';
import { loginRoleUrl } from '../../db/login-role';
import { signingKeys } from '../../db/signing-key-service';
import { ROOT_DIR } from '../../runtime/config';
import { createVault } from '../../vault/vault';
import { listen, testServices } from '../helpers/api';
import { createApiApp } from '../../api/apps';
import { createLogger } from '../../runtime/logger';
import { scratchDatabase } from '../helpers/scratch-db';

/**
 * The deployment's signing keys (docs/entitlement-tokens.md, "Keys"). Keys are per deployment,
 * so these tests rotate and withdraw in a database of their own: the run's database is shared
 * with files that sign at the same time.
 */
const masterKey = `k1:${crypto.randomBytes(32).toString('base64')}`;
const vault = createVault(masterKey);
let url: string;
let owner: Knex;
let app: Knex;
let drop: () => Promise<void>;

beforeAll(async () => {
  ({ url, owner, app, drop } = await scratchDatabase('keys'));
}, 120_000);

afterAll(async () => drop?.());

const payload = (n: number) => ({ n, iat: Math.floor(Date.now() / 1000) });
const rows = () => owner('signing_keys').select('*').orderBy('created_at');
async function verifies(token: string, keys: Knex = app): Promise<boolean> {
  const jwks = createLocalJWKSet(await signingKeys(keys, vault).publishedJwks());
  return compactVerify(token, jwks).then(
    () => true,
    (e) => {
      if (e instanceof joseErrors.JWKSNoMatchingKey || e instanceof joseErrors.JWSSignatureVerificationFailed)
        return false;
      throw e;
    },
  );
}

describe('signing keys', () => {
  it('processes starting at once make one signer, sealed by the vault; the published key has no private part', async () => {
    await Promise.all([0, 1, 2, 3].map(() => signingKeys(app, vault).ensureSigningKey()));
    const all = await rows();
    expect(all.filter((r) => r.state === 'active')).toHaveLength(1);
    expect(all).toHaveLength(1);
    expect(all[0].private_key_enc).toMatch(/^v1:k1:/);
    expect(all[0].private_key_enc).not.toContain(all[0].public_jwk.x);
    const { keys } = await signingKeys(app, vault).publishedJwks();
    expect(keys).toEqual([
      { kty: 'OKP', crv: 'Ed25519', x: all[0].public_jwk.x, kid: all[0].kid, alg: 'EdDSA', use: 'sig' },
    ]);
  });

  it('signs a compact JWS (EdDSA, kid, typ) a stock JOSE library verifies against the published keys', async () => {
    const token = await signingKeys(app, vault).signJws(payload(1), 'entitlements+jwt');
    const [active] = await rows();
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'EdDSA', kid: active.kid, typ: 'entitlements+jwt' });
    const jwks = createLocalJWKSet(await signingKeys(app, vault).publishedJwks());
    const { payload: body } = await compactVerify(token, jwks);
    expect(JSON.parse(new TextDecoder().decode(body)).n).toBe(1);
    // One changed character of the payload: refused.
    const [h, p, s] = token.split('.');
    const edited = Buffer.from(JSON.stringify({ ...payload(2) })).toString('base64url');
    expect(p).not.toBe(edited);
    await expect(compactVerify([h, edited, s].join('.'), jwks)).rejects.toThrow(
      joseErrors.JWSSignatureVerificationFailed,
    );
  });

  it('the private key opens under its MASTER_KEY only: a process with another key signs with a key of its own, the old one still published', async () => {
    // A database of its own: the other cases count this file's keys.
    const own = await scratchDatabase('keys-stranger');
    const stranger = createKnex(loginRoleUrl(own.url), { max: 1 });
    const ownRows = () => own.owner('signing_keys').select('*').orderBy('created_at');
    try {
      await signingKeys(own.app, vault).signJws(payload(8), 'x');
      const before = (await ownRows()).find((r) => r.state === 'active');
      const signed = await signingKeys(
        stranger,
        createVault(`k1:${crypto.randomBytes(32).toString('base64')}`),
      ).signJws(payload(9), 'x');
      const kid = decodeProtectedHeader(signed).kid;
      expect(kid).not.toBe(before.kid);
      const after = await ownRows();
      expect(after.find((r) => r.kid === before.kid)).toMatchObject({ state: 'retired', private_key_enc: null });
      expect(after.filter((r) => r.state === 'active').map((r) => r.kid)).toEqual([kid]);
      expect(await verifies(signed, own.app)).toBe(true);
    } finally {
      await stranger.destroy();
      await own.drop();
    }
  });

  it('rotation: new signatures use the new kid, the old key signs nothing more and stays published, its private half erased', async () => {
    const keys = signingKeys(app, vault);
    const before = await keys.signJws(payload(3), 'entitlements+jwt');
    const oldKid = decodeProtectedHeader(before).kid;
    const r = await keys.rotate();
    expect(r).toEqual({ kid: expect.any(String), rotated: true, retired: oldKid });
    const after = await keys.signJws(payload(4), 'entitlements+jwt');
    expect(decodeProtectedHeader(after).kid).toBe(r.kid);
    expect(r.kid).not.toBe(oldKid);
    expect(await verifies(before)).toBe(true);
    expect(await verifies(after)).toBe(true);
    expect((await keys.publishedJwks()).keys.map((k) => k.kid)).toEqual([r.kid, oldKid]);
    const old = (await rows()).find((k) => k.kid === oldKid);
    expect(old).toMatchObject({ state: 'retired', private_key_enc: null });
    expect(old.retired_at).toBeInstanceOf(Date);
  });

  it('the scheduled rotation replaces the signer only once it is as old as the interval', async () => {
    const keys = signingKeys(app, vault);
    const signer = (await rows()).find((k) => k.state === 'active');
    expect(await keys.rotate({ olderThanMs: 3_600_000 })).toEqual({ kid: signer.kid, rotated: false, retired: null });
    const r = await keys.rotate({ olderThanMs: 0 });
    expect(r).toMatchObject({ rotated: true, retired: signer.kid });
  });

  it('two rotations at once leave one signer', async () => {
    const keys = signingKeys(app, vault);
    await Promise.all([keys.rotate(), keys.rotate(), keys.rotate()]);
    expect((await rows()).filter((r) => r.state === 'active')).toHaveLength(1);
  });

  it('withdraw: the key is gone from the published set at once and what it signed stops verifying; withdrawing the signer makes a new one', async () => {
    const keys = signingKeys(app, vault);
    const token = await keys.signJws(payload(5), 'entitlements+jwt');
    const kid = decodeProtectedHeader(token).kid!;
    expect(await verifies(token)).toBe(true);
    const w = await keys.withdraw(kid);
    expect(w).toEqual({ kid, already_withdrawn: false, new_signer: expect.any(String) });
    expect((await keys.publishedJwks()).keys.map((k) => k.kid)).not.toContain(kid);
    expect(await verifies(token)).toBe(false);
    const next = await keys.signJws(payload(6), 'entitlements+jwt');
    expect(decodeProtectedHeader(next).kid).toBe(w!.new_signer);
    expect(await verifies(next)).toBe(true);
    expect((await rows()).find((k) => k.kid === kid)).toMatchObject({ state: 'withdrawn', private_key_enc: null });
    // Again: nothing changes; an unknown kid is no key.
    expect(await keys.withdraw(kid)).toEqual({ kid, already_withdrawn: true, new_signer: null });
    expect(await keys.withdraw('no-such-kid')).toBeNull();
  });

  it('signing by the kid a read found active: that key; a kid that no longer signs is not opened, the active key signs', async () => {
    // Another process: its own handle, so its own signing service with nothing opened yet.
    const other = createKnex(loginRoleUrl(url), { max: 1 });
    try {
      const keys = signingKeys(app, vault);
      const signer = (await rows()).find((k) => k.state === 'active');
      const own = await keys.signJwsAs(signer.kid, payload(11), 'entitlements+jwt');
      expect(decodeProtectedHeader(own)).toEqual({ alg: 'EdDSA', kid: signer.kid, typ: 'entitlements+jwt' });
      expect(await verifies(own)).toBe(true);
      const r = await keys.rotate();
      // A kid read before the rotation, presented after it: the retired key is not opened for it.
      const late = await signingKeys(other, vault).signJwsAs(signer.kid, payload(12), 'entitlements+jwt');
      expect(decodeProtectedHeader(late).kid).toBe(r.kid);
      expect(await verifies(late)).toBe(true);
      // No signer read (none found): as signJws.
      expect(decodeProtectedHeader(await keys.signJwsAs(undefined, payload(13), 'x')).kid).toBe(r.kid);
    } finally {
      await other.destroy();
    }
  });

  it('GET /.well-known/jwks.json: no auth, cacheable, readable cross-origin, what a remote key set verifies with', async () => {
    const services = testServices({ db: app, vault });
    const server = await listen(createApiApp(services, createLogger('silent')));
    try {
      const res = await fetch(`${server.url}/.well-known/jwks.json`);
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toBe('public, max-age=300');
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(res.headers.get('content-type')).toMatch(/^application\/jwk-set\+json/);
      const body = await res.json();
      expect(body).toEqual(await signingKeys(app, vault).publishedJwks());
      for (const k of body.keys) expect(Object.keys(k).sort()).toEqual(['alg', 'crv', 'kid', 'kty', 'use', 'x']);
      const token = await signingKeys(app, vault).signJws(payload(7), 'entitlements+jwt');
      await expect(
        compactVerify(token, createRemoteJWKSet(new URL(`${server.url}/.well-known/jwks.json`))),
      ).resolves.toBeDefined();
      const post = await fetch(`${server.url}/.well-known/jwks.json`, { method: 'POST' });
      expect(post.status).toBe(405);
      expect(post.headers.get('allow')).toBe('GET, HEAD');
      expect((await post.json()).error).toBe('method_not_allowed');
    } finally {
      await server.close();
    }
  });

  it('the admin CLI: token-key:rotate --json answers the new kid; token-key:withdraw --kid removes a key; an unknown kid is a usage error', async () => {
    const admin = (...args: string[]) =>
      promisify(execFile)(process.execPath, ['--import', 'tsx', path.join(ROOT_DIR, 'scripts/admin.ts'), ...args], {
        env: { ...process.env, DATABASE_URL: url, MASTER_KEY: masterKey, LOG_LEVEL: 'silent' },
        cwd: ROOT_DIR,
      }).then(
        (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
        (e) => ({ code: e.code as number, stdout: e.stdout as string, stderr: e.stderr as string }),
      );
    const signer = (await rows()).find((k) => k.state === 'active');
    const rotated = await admin('token-key:rotate', '--json');
    expect(rotated.code).toBe(0);
    const out = JSON.parse(rotated.stdout);
    expect(out).toEqual({ kid: expect.any(String), retired: signer.kid });
    const token = await signingKeys(app, vault).signJws(payload(8), 'entitlements+jwt');
    expect(decodeProtectedHeader(token).kid).toBe(out.kid);
    const withdrawn = await admin('token-key:withdraw', '--kid', signer.kid, '--json');
    expect(withdrawn.code).toBe(0);
    expect(JSON.parse(withdrawn.stdout)).toEqual({
      kid: signer.kid,
      withdrawn: true,
      already_withdrawn: false,
      new_signer: null,
    });
    expect((await signingKeys(app, vault).publishedJwks()).keys.map((k) => k.kid)).not.toContain(signer.kid);
    const unknown = await admin('token-key:withdraw', '--kid', 'nope', '--json');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/no signing key with kid nope/);
    expect((await admin('token-key:withdraw', '--json')).code).toBe(2);
  });
});
