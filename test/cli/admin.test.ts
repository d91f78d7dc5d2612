import { SCOPES, scopeDescription } from '../../domain/scopes';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { PROVIDERS } from '../../domain/providers';
import { loadConfig } from '../../runtime/config';
import { passwordMatches } from '../../runtime/passwords';
import { ensureDemoLogin } from '../../seed/demo-login';
import { startAllEmulators } from '../../emulators/registry';
import type { RunningEmulator } from '../../emulators/common/host';
import { hashSecretKey } from '../../db/key-material';
import { adminCli, adminProcess } from '../helpers/admin-cli';
import { testDb } from '../helpers/db';
import { call, startApi } from '../helpers/api';
import { createConnection } from '../../db/connection-service';
import { withTenant } from '../../db/tenant-tx';
import { createVault } from '../../vault/vault';

/**
 * The admin CLI contract (README, "Admin CLI") against the run's database: each command through
 * the CLI's `runAdmin` in this process (test/helpers/admin-cli.ts), and the real process held to
 * the same answers by the first test.
 */
describe('admin CLI', () => {
  let emulators: Record<string, RunningEmulator>;
  let env: NodeJS.ProcessEnv;
  let api: Awaited<ReturnType<typeof startApi>>;
  beforeAll(async () => {
    emulators = await startAllEmulators(
      { emulatorPorts: {} as never, dataDir: '' },
      { persistent: false, anyPort: true },
    );
    env = {
      ...process.env,
      DATABASE_URL: inject('databaseUrl'),
      MASTER_KEY: `k1:${crypto.randomBytes(32).toString('base64')}`,
      LOG_LEVEL: 'silent',
      // The demo login's file goes here, not into the checkout's .data.
      DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'billing-admin-')),
    };
    for (const p of PROVIDERS) env[`${p.toUpperCase()}_API_BASE`] = emulators[p].url;
    api = await startApi();
  });
  afterAll(async () => {
    await api.close();
    await Promise.all(Object.values(emulators).map((e) => e.close()));
  });

  const admin = adminCli(() => env);
  const adminAsProcess = adminProcess(() => env);

  it('the CLI as a process answers as runAdmin does: output, one-line errors and exit codes (0, 2 on bad input)', async () => {
    const cases = [
      ['--help'],
      ['frobnicate'],
      ['key:create', '--tenant', 'nope', '--scopes', 'products:read'],
      ['key:create', '--tenant', crypto.randomUUID(), '--scopes', 'products:read', '--json'],
    ];
    const [processes, inProcess] = await Promise.all([
      Promise.all(cases.map((c) => adminAsProcess(...c))),
      Promise.all(cases.map((c) => admin(...c))),
    ]);
    expect(processes).toEqual(inProcess);
    expect(processes.map((r) => r.code)).toEqual([0, 2, 2, 2]);
    expect(processes[0].stdout).toContain('tenant:create');
    expect(processes[3].stderr).toMatch(/^error: no tenant with id [0-9a-f-]{36}\n$/);
    // A command that writes: the process prints one JSON object whose key works.
    const made = await adminAsProcess('tenant:create', '--name', 'Process Co', '--json');
    expect(made.code).toBe(0);
    const out = JSON.parse(made.stdout);
    expect((await call(api.apiUrl, '/tenant', out.secret_key)).body.id).toBe(out.tenant_id);
  });

  it('tenant:create --json prints one JSON object; the key works with every scope and only its hash is stored', async () => {
    const r = await admin('tenant:create', '--name', 'Cli Co', '--json');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(Object.keys(out).sort()).toEqual(['publishable_key', 'revenuecat_keys', 'secret_key', 'tenant_id']);
    // RevenueCat-format public keys (test mode), each answering RevenueCat's client API under /revenuecat.
    expect(out.revenuecat_keys).toEqual({
      web: expect.stringMatching(/^rcb_sb_[0-9A-Za-z]{32}$/),
      ios: expect.stringMatching(/^appl_[0-9A-Za-z]{32}$/),
      android: expect.stringMatching(/^goog_[0-9A-Za-z]{32}$/),
    });
    for (const key of Object.values(out.revenuecat_keys) as string[])
      expect((await call(`${api.apiRoot}/revenuecat`, '/v1/subscribers/u1', key)).status).toBe(200);
    expect(JSON.stringify(await testDb()('revenuecat_keys').where({ tenant_id: out.tenant_id }))).not.toContain(
      out.revenuecat_keys.web,
    );
    expect(out.secret_key).toMatch(/^sk_[0-9A-Za-z]{32,}$/);
    expect(out.publishable_key).toMatch(/^pk_test_/);
    const tenant = await call(api.apiUrl, '/tenant', out.secret_key);
    expect(tenant.status).toBe(200);
    expect(tenant.body.id).toBe(out.tenant_id);
    expect([...tenant.body.scopes].sort()).toEqual([...SCOPES].sort());
    const stored = await testDb()('api_keys').where({ tenant_id: out.tenant_id });
    expect(stored).toHaveLength(1);
    expect(stored[0].key_hash).toBe(hashSecretKey(out.secret_key));
    expect(JSON.stringify(stored)).not.toContain(out.secret_key);
  });

  it('key:create mints a scoped, expiring key; key:revoke makes it 401', async () => {
    const t = JSON.parse((await admin('tenant:create', '--name', 'Keys Co', '--json')).stdout);
    const k = await admin(
      'key:create',
      '--tenant',
      t.tenant_id,
      '--scopes',
      'products:read,tenant:read',
      '--expires-in',
      '3600',
      '--json',
    );
    expect(k.code).toBe(0);
    const key = JSON.parse(k.stdout);
    expect(Object.keys(key).sort()).toEqual(['key_id', 'secret_key']);
    const me = await call(api.apiUrl, '/tenant', key.secret_key);
    expect(me.body.scopes).toEqual(['products:read', 'tenant:read']);
    expect(me.body.key.expires_at).not.toBeNull();
    expect((await call(api.apiUrl, '/subscribers', key.secret_key)).status).toBe(403);

    const rv = await admin('key:revoke', '--key', key.key_id);
    expect(rv.code).toBe(0);
    expect((await call(api.apiUrl, '/tenant', key.secret_key)).status).toBe(401);
  });

  it('key:create --require-approval: the key’s writes wait for a person (202 pending_approval), nothing written', async () => {
    const t = JSON.parse((await admin('tenant:create', '--name', 'Approval Co', '--json')).stdout);
    const k = await admin(
      'key:create',
      '--tenant',
      t.tenant_id,
      '--scopes',
      'products:write',
      '--require-approval',
      '--json',
    );
    expect(k.code).toBe(0);
    const key = JSON.parse(k.stdout);
    expect((await testDb()('api_keys').where({ id: key.key_id }).first()).require_approval).toBe(true);
    const held = await call(api.apiUrl, '/products', key.secret_key, {
      method: 'POST',
      body: JSON.stringify({ sku: 'held_by_admin_key' }),
    });
    expect([held.status, held.body.status]).toEqual([202, 'pending_approval']);
    expect(await testDb()('products').where({ tenant_id: t.tenant_id })).toHaveLength(0);
    const audit = await testDb()('audit_entries').where({ tenant_id: t.tenant_id, action: 'api_keys.create' }).first();
    expect(audit.detail).toMatchObject({ require_approval: true });
    const bad = await admin(
      'key:create',
      '--tenant',
      t.tenant_id,
      '--scopes',
      'products:write',
      '--require-approval',
      'yes',
    );
    expect(bad.code).not.toBe(0);
  });

  it('bad arguments exit non-zero with a one-line reason and write nothing', async () => {
    const t = JSON.parse((await admin('tenant:create', '--name', 'Bad Args', '--json')).stdout);
    // Scoped to the tenants these cases name: other suites mint keys in the same database meanwhile.
    const ghost = crypto.randomUUID();
    const keysOf = () => testDb()('api_keys').whereIn('tenant_id', [t.tenant_id, ghost]).count({ n: '*' }).first();
    const before = await keysOf();
    const cases = [
      ['key:create', '--tenant', t.tenant_id, '--scopes', 'products:read,root:all', '--json'],
      ['key:create', '--tenant', ghost, '--scopes', 'products:read', '--json'],
      ['key:create', '--tenant', t.tenant_id, '--scopes', 'products:read', '--expires-in', 'soon', '--json'],
      ['key:create', '--tenant', t.tenant_id, '--scopes', 'products:read', '--expires-in', '-5', '--json'],
      ['key:create', '--tenant', 'nope', '--scopes', 'products:read'],
      ['key:revoke', '--key', crypto.randomUUID()],
      ['tenant:create', '--json'],
      ['frobnicate'],
    ];
    // Independent commands: started together, each checked on its own.
    const results = await Promise.all(cases.map(async (c) => ({ c, r: await admin(...c) })));
    for (const { c, r } of results) {
      expect([c.join(' '), r.code === 0]).toEqual([c.join(' '), false]);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(/^error: /);
      expect(r.stdout).toBe('');
    }
    expect((await admin('key:create', '--tenant', t.tenant_id, '--scopes', 'root:all')).stderr).toContain('root:all');
    expect(await keysOf()).toEqual(before);
    expect(before).toEqual({ n: 1 });
  });

  it('key:create --revenuecat mints a key of that platform and mode; key:revoke makes it 401', async () => {
    const t = JSON.parse((await admin('tenant:create', '--name', 'RC Keys Co', '--json')).stdout);
    const rc = `${api.apiRoot}/revenuecat`;
    const live = await admin('key:create', '--tenant', t.tenant_id, '--revenuecat', 'web', '--mode', 'live', '--json');
    expect(live.code).toBe(0);
    const key = JSON.parse(live.stdout);
    expect(Object.keys(key).sort()).toEqual(['key_id', 'public_key']);
    expect(key.public_key).toMatch(/^rcb_(?!sb_)[0-9A-Za-z]{32}$/);
    const android = JSON.parse(
      (await admin('key:create', '--tenant', t.tenant_id, '--revenuecat', 'android', '--json')).stdout,
    );
    expect(android.public_key).toMatch(/^goog_/);
    expect(await testDb()('revenuecat_keys').where({ id: android.key_id }).first('mode')).toEqual({ mode: 'test' });
    expect((await call(rc, '/v1/subscribers/u1', key.public_key)).status).toBe(200);
    expect((await admin('key:revoke', '--key', key.key_id)).code).toBe(0);
    expect((await call(rc, '/v1/subscribers/u1', key.public_key)).status).toBe(401);
    for (const bad of [
      ['--revenuecat', 'windows'],
      ['--revenuecat', 'ios', '--mode', 'prod'],
      ['--revenuecat', 'ios', '--scopes', 'tenant:read'],
    ]) {
      const r = await admin('key:create', '--tenant', t.tenant_id, ...bad, '--json');
      expect([bad.join(' '), r.code]).toEqual([bad.join(' '), 2]);
    }
  });

  it('--help lists every command', async () => {
    const r = await admin('--help');
    expect(r.code).toBe(0);
    for (const c of ['tenant:create', 'key:create', 'key:revoke', 'demo', 'vault:reencrypt'])
      expect(r.stdout).toContain(c);
  });

  it('--help lists every scope a key may carry, each with its description, in the scope table’s order', async () => {
    const r = await admin('--help');
    expect(r.code).toBe(0);
    const after = r.stdout.split('Scopes:\n')[1].split('\n');
    // The indented lines right after the heading, up to the next paragraph.
    const listed = after
      .slice(
        0,
        after.findIndex((l) => !/^ {2}\S/.test(l)),
      )
      .map((l) => l.trim().split(/\s{2,}/));
    expect(listed).toEqual(SCOPES.map((s) => [s, scopeDescription(s)]));
  });

  it('demo --json: the demo tenant, created once and seeded with data and connected emulator providers, each call a fresh key', async () => {
    const a = await admin('demo', '--json');
    expect(a.code).toBe(0);
    const first = JSON.parse(a.stdout);
    const second = JSON.parse((await admin('demo', '--json')).stdout);
    expect(second.tenant_id).toBe(first.tenant_id);
    expect(second.secret_key).not.toBe(first.secret_key);
    expect(second.publishable_key).toBe(first.publishable_key);
    expect(Object.keys(second.revenuecat_keys).sort()).toEqual(['android', 'ios', 'web']);
    expect(second.revenuecat_keys.web).toMatch(/^rcb_sb_/);
    // Minted by revenuecat_keys.create as the operator: each key printed has the operation's audit row.
    const minted = await testDb()('revenuecat_keys').whereIn(
      'key_hash',
      (Object.values(second.revenuecat_keys) as string[]).map(hashSecretKey),
    );
    expect(minted.map((k) => [k.platform, k.mode, k.tenant_id]).sort()).toEqual([
      ['android', 'test', first.tenant_id],
      ['ios', 'test', first.tenant_id],
      ['web', 'test', first.tenant_id],
    ]);
    const audited = await testDb()('audit_entries').where({
      tenant_id: first.tenant_id,
      action: 'revenuecat_keys.create',
    });
    for (const k of minted)
      expect(
        audited.filter((a) => a.detail.id === k.id).map((a) => [a.actor_type, a.outcome, a.detail.surface]),
      ).toEqual([['operator', 'ok', 'cli']]);
    // The dashboard login: generated once into the data dir, the same on every call, and it is the person's password.
    expect(first.dashboard_email).toMatch(/^demo-[0-9a-f]{8}@example\.com$/);
    expect(first.dashboard_password).toMatch(/^[\w-]{24}$/);
    expect([second.dashboard_email, second.dashboard_password]).toEqual([
      first.dashboard_email,
      first.dashboard_password,
    ]);
    expect(fs.readFileSync(path.join(env.DATA_DIR!, 'demo-login.json'), 'utf8')).toContain(first.dashboard_password);
    const person = await testDb()('dashboard_users').where({ email: first.dashboard_email }).first();
    expect(person.tenant_id).toBe(first.tenant_id);
    expect(await passwordMatches(person.password_hash, first.dashboard_password)).toBe(true);
    expect(JSON.stringify(await testDb()('audit_entries').where({ tenant_id: first.tenant_id }))).not.toContain(
      first.dashboard_password,
    );
    // Never in production: no login is made there.
    expect(await ensureDemoLogin(testDb(), { ...loadConfig(env), env: 'production' }, first.tenant_id)).toBeUndefined();
    for (const path of [
      '/products',
      '/subscribers',
      '/entitlements',
      '/coupons',
      '/webhooks',
      '/audit',
      '/providers',
    ]) {
      const r = await call(api.apiUrl, path, second.secret_key);
      expect([path, r.status, r.body.data.length > 0]).toEqual([path, 200, true]);
    }
    const providers = await call(api.apiUrl, '/providers', second.secret_key);
    expect(providers.body.data.map((c: any) => c.provider).sort()).toEqual([...PROVIDERS].sort());
    expect(providers.body.data.every((c: any) => c.is_default && c.has_test_credential && c.has_live_credential)).toBe(
      true,
    );
    expect((await call(api.apiUrl, '/paywall', second.secret_key)).status).toBe(200);
  });

  it("demo:publishable-key --json: the demo tenant's publishable key, with no secret key minted", async () => {
    const demo = JSON.parse((await admin('demo', '--json')).stdout);
    const keys = async () =>
      Number(
        (await testDb()('api_keys').where({ tenant_id: demo.tenant_id }).count<{ count: string }[]>('* as count'))[0]
          .count,
      );
    const before = await keys();
    const r = await admin('demo:publishable-key', '--json');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ tenant_id: demo.tenant_id, publishable_key: demo.publishable_key });
    expect(await keys()).toBe(before);
  });

  it('operator actions land in the tenant’s audit trail with actor_type operator, never a key value', async () => {
    const created = JSON.parse((await admin('tenant:create', '--name', 'Audited Co', '--json')).stdout);
    const key = JSON.parse(
      (await admin('key:create', '--tenant', created.tenant_id, '--scopes', 'audit:read', '--json')).stdout,
    );
    expect((await admin('key:revoke', '--key', key.key_id)).code).toBe(0);
    await withTenant(testDb(), created.tenant_id, (trx) =>
      createConnection(trx, createVault(env.MASTER_KEY!), {
        provider: 'psp_a',
        account_ref: `acct_audit_${crypto.randomBytes(4).toString('hex')}`,
        credentials: { test: { secret_key: 'sk_test_audit' } },
      }),
    );
    const re = await admin('vault:reencrypt', '--json');
    expect(re.stderr).not.toMatch(/TypeError|ReferenceError/);

    const audit = await call(`${api.apiRoot}/v1`, '/audit?actor_type=operator', created.secret_key);
    expect(audit.status).toBe(200);
    const actions = audit.body.data.map((a: any) => a.action).sort();
    expect(actions).toEqual([
      'api_keys.create',
      'api_keys.revoke',
      // tenant:create's RevenueCat key set: the operation once per key (web, ios, android).
      'revenuecat_keys.create',
      'revenuecat_keys.create',
      'revenuecat_keys.create',
      'tenant.create',
      'vault.reencrypt',
    ]);
    expect(audit.body.data.every((a: any) => a.actor_type === 'operator' && typeof a.actor_id === 'string')).toBe(true);
    expect(audit.body.data.find((a: any) => a.action === 'api_keys.revoke').detail.id).toBe(key.key_id);
    const text = JSON.stringify(audit.body);
    for (const secret of [created.secret_key, key.secret_key, 'sk_test_audit']) expect(text).not.toContain(secret);
  });
});
