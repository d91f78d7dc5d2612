import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { touchLastUsedWith } from '../../api/auth';
import { markRevenueCatKeyUsed } from '../../db/revenuecat';
import { call, startApi } from '../helpers/api';
import { adminCli, operatorEnv } from '../helpers/admin-cli';
import { testDb } from '../helpers/db';
import { until } from '../helpers/until';

/**
 * The admin CLI's commands for the keys of RevenueCat's SDKs run the operations
 * (`revenuecat_keys.create`, `.revoke`, `.list`) as the operator (docs/operations.md, "The admin
 * CLI is an operator"), and a key's last use is recorded at most once a minute, off the request
 * path, and shown by the list. The CLI's commands (test/helpers/admin-cli.ts) against the run's database and an api.
 */
describe('admin CLI: RevenueCat keys through the operations; last use', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  const admin = adminCli(operatorEnv);
  const auditOf = (tenantId: string, action: string) =>
    testDb()('audit_entries').where({ tenant_id: tenantId, action }).orderBy('created_at');
  const keyRow = (id: string) => testDb()('revenuecat_keys').where({ id }).first();

  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(async () => api?.close());

  it('tenant:create mints its RevenueCat key set through revenuecat_keys.create: one audit row (operator, cli) per key it printed', async () => {
    const r = await admin('tenant:create', '--name', 'RC Set Co', '--json');
    expect(r.code).toBe(0);
    const t = JSON.parse(r.stdout);
    // The output contract: three test-mode keys, the web one in the web SDK's sandbox format.
    expect(Object.keys(t.revenuecat_keys).sort()).toEqual(['android', 'ios', 'web']);
    expect(t.revenuecat_keys.web).toMatch(/^rcb_sb_/);
    const rows = await testDb()('revenuecat_keys').where({ tenant_id: t.tenant_id }).orderBy('created_at');
    expect(rows.map((k) => [k.platform, k.mode]).sort()).toEqual([
      ['android', 'test'],
      ['ios', 'test'],
      ['web', 'test'],
    ]);
    const created = await auditOf(t.tenant_id, 'revenuecat_keys.create');
    expect(created.map((a) => [a.actor_type, a.outcome, a.detail.surface])).toEqual([
      ['operator', 'ok', 'cli'],
      ['operator', 'ok', 'cli'],
      ['operator', 'ok', 'cli'],
    ]);
    // Each row names the key it minted (by id), never its value.
    expect(created.map((a) => a.detail.id).sort()).toEqual(rows.map((k) => k.id).sort());
    for (const value of Object.values(t.revenuecat_keys) as string[])
      expect(JSON.stringify(created)).not.toContain(value);
  }, 120_000);

  it('key:create --revenuecat, key:list and key:revoke are the operations’ own: their validation, their audit rows (operator, cli)', async () => {
    const t = JSON.parse((await admin('tenant:create', '--name', 'RC Operator Co', '--json')).stdout);
    const made = await admin('key:create', '--tenant', t.tenant_id, '--revenuecat', 'ios', '--mode', 'live', '--json');
    expect(made.code).toBe(0);
    const key = JSON.parse(made.stdout);
    expect(Object.keys(key).sort()).toEqual(['key_id', 'public_key']);
    expect(key.public_key).toMatch(/^appl_/);
    expect(await keyRow(key.key_id)).toMatchObject({ platform: 'ios', mode: 'live', tenant_id: t.tenant_id });

    // The operation's validation, its words, audited as its refusal; nothing minted.
    const before = (await testDb()('revenuecat_keys').where({ tenant_id: t.tenant_id })).length;
    const bad = await admin('key:create', '--tenant', t.tenant_id, '--revenuecat', 'windows', '--json');
    expect([bad.code, bad.stdout]).toEqual([2, '']);
    expect(bad.stderr).toMatch(/^error: platform must be one of web, ios, android/);
    const badMode = await admin('key:create', '--tenant', t.tenant_id, '--revenuecat', 'ios', '--mode', 'prod');
    expect(badMode.code).toBe(2);
    expect(badMode.stderr).toMatch(/^error: mode /);
    expect((await testDb()('revenuecat_keys').where({ tenant_id: t.tenant_id })).length).toBe(before);

    const listed = await admin('key:list', '--tenant', t.tenant_id, '--revenuecat', '--json');
    expect(listed.code).toBe(0);
    const data = JSON.parse(listed.stdout).data as any[];
    expect(data[0]).toMatchObject({ id: key.key_id, platform: 'ios', mode: 'live', last_used_at: null });
    expect(data.map((k) => k.platform).sort()).toEqual(['android', 'ios', 'ios', 'web']);
    expect(listed.stdout).not.toContain(key.public_key);

    expect((await admin('key:revoke', '--key', key.key_id, '--json')).stdout).toContain('"already_revoked":false');
    const again = JSON.parse((await admin('key:revoke', '--key', key.key_id, '--json')).stdout);
    expect(again).toEqual({ key_id: key.key_id, revoked: true, already_revoked: true });
    expect((await call(`${api.apiRoot}/revenuecat`, '/v1/subscribers/u1', key.public_key)).status).toBe(401);

    const created = await auditOf(t.tenant_id, 'revenuecat_keys.create');
    const revoked = await auditOf(t.tenant_id, 'revenuecat_keys.revoke');
    // tenant:create's set (the operation once per key), then this key's, then the two refusals.
    expect(created.map((a) => [a.actor_type, a.outcome])).toEqual([
      ['operator', 'ok'],
      ['operator', 'ok'],
      ['operator', 'ok'],
      ['operator', 'ok'],
      ['operator', 'invalid_request'],
      ['operator', 'invalid_request'],
    ]);
    expect(created[3].detail).toMatchObject({ surface: 'cli', id: key.key_id });
    expect(revoked.map((a) => [a.actor_type, a.outcome, a.detail.surface, a.detail.id])).toEqual([
      ['operator', 'ok', 'cli', key.key_id],
      ['operator', 'ok', 'cli', key.key_id],
    ]);
    expect(JSON.stringify([...created, ...revoked])).not.toContain(key.public_key);
    // A flag of secret keys stays a usage error; key:list names another tenant's keys never.
    expect((await admin('key:create', '--tenant', t.tenant_id, '--revenuecat', 'ios', '--scopes', 'x')).code).toBe(2);
    const other = JSON.parse((await admin('tenant:create', '--name', 'RC Other Co', '--json')).stdout);
    const otherList = JSON.parse(
      (await admin('key:list', '--tenant', other.tenant_id, '--revenuecat', '--json')).stdout,
    );
    expect(otherList.data.map((k: any) => k.id)).not.toContain(key.key_id);
    expect(otherList.data).toHaveLength(3);
  });

  it('a key’s last use: written off the request path on its first use, not again within the minute; shown by key:list', async () => {
    const t = JSON.parse((await admin('tenant:create', '--name', 'RC Last Used Co', '--json')).stdout);
    const key = JSON.parse(
      (await admin('key:create', '--tenant', t.tenant_id, '--revenuecat', 'android', '--json')).stdout,
    );
    expect((await keyRow(key.key_id)).last_used_at).toBeNull();
    const rc = `${api.apiRoot}/revenuecat`;
    expect((await call(rc, '/v1/subscribers/u1', key.public_key)).status).toBe(200);
    const first = (
      await until(
        'the key’s last use is written',
        () => keyRow(key.key_id),
        (r) => !!r.last_used_at,
      )
    ).last_used_at as Date;
    // More requests inside the minute write nothing: the stored value stays, and no write is even started.
    for (let i = 0; i < 3; i++) expect((await call(rc, '/v1/subscribers/u1', key.public_key)).status).toBe(200);
    expect((await keyRow(key.key_id)).last_used_at).toEqual(first);
    const write = (at: Date) => markRevenueCatKeyUsed(testDb(), key.key_id, at);
    expect(touchLastUsedWith(first, write, new Date(first.getTime() + 30_000))).toBeNull();
    // Past the minute the next use writes (awaited here; the request path does not wait for it).
    const later = new Date(first.getTime() + 61_000);
    await touchLastUsedWith(first, write, later);
    expect((await keyRow(key.key_id)).last_used_at).toEqual(later);
    // A write that arrives late never moves it back.
    await markRevenueCatKeyUsed(testDb(), key.key_id, first);
    expect((await keyRow(key.key_id)).last_used_at).toEqual(later);

    const listed = JSON.parse((await admin('key:list', '--tenant', t.tenant_id, '--revenuecat', '--json')).stdout);
    expect(listed.data.find((k: any) => k.id === key.key_id).last_used_at).toBe(later.toISOString());
    const text = await admin('key:list', '--tenant', t.tenant_id, '--revenuecat');
    expect(text.stdout).toContain(`last used ${later.toISOString()}`);
    expect(text.stdout.trim().split('\n')).toHaveLength(4);
  });
});
