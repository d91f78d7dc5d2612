import { describe, expect, it } from 'vitest';
import { adminCli, operatorEnv } from '../helpers/admin-cli';
import { testDb } from '../helpers/db';

/**
 * The admin CLI is an actor (docs/operations.md, "The admin CLI is an operator"): its key commands
 * run the key operations as an `operator`, so the operation's validation, transaction and audit
 * row are theirs. The CLI's commands (test/helpers/admin-cli.ts) against the run's database.
 */
describe('admin CLI: key commands run the operations as the operator', () => {
  const admin = adminCli(operatorEnv);
  const auditOf = (tenantId: string, action: string) =>
    testDb()('audit_entries').where({ tenant_id: tenantId, action }).orderBy('created_at');

  it("key:create and key:revoke are the operations' own: their audit rows name the operator and the operation, the key no person", async () => {
    const t = JSON.parse((await admin('tenant:create', '--name', 'Operator Co', '--json')).stdout);
    const made = await admin('key:create', '--tenant', t.tenant_id, '--scopes', 'products:read', '--json');
    expect(made.code).toBe(0);
    const key = JSON.parse(made.stdout);
    expect(Object.keys(key).sort()).toEqual(['key_id', 'secret_key']);
    expect((await admin('key:revoke', '--key', key.key_id, '--json')).code).toBe(0);

    const [created] = await auditOf(t.tenant_id, 'api_keys.create');
    const [revoked] = await auditOf(t.tenant_id, 'api_keys.revoke');
    for (const row of [created, revoked]) {
      expect(row.actor_type).toBe('operator');
      expect(row.outcome).toBe('ok');
      // What the operation runner records (operations/execute.ts): the surface and a request id.
      expect(row.detail.surface).toBe('cli');
      expect(row.request_id).toEqual(expect.any(String));
    }
    expect(created.detail).toMatchObject({ id: key.key_id, scopes: ['products:read'] });
    expect(revoked.detail).toMatchObject({ id: key.key_id });
    // The operator's keys, the tenant's first one included, name no person as their minter.
    const keys = await testDb()('api_keys').where({ tenant_id: t.tenant_id });
    expect(keys.map((k) => k.created_by_user_id)).toEqual([null, null]);
  }, 120_000);

  it("an invalid scope or expiry gets the operation's own validation message, audited as its refusal; nothing is written", async () => {
    const t = JSON.parse((await admin('tenant:create', '--name', 'Refused Co', '--json')).stdout);
    const [scope, expiry] = await Promise.all([
      admin('key:create', '--tenant', t.tenant_id, '--scopes', 'products:read,root:all', '--json'),
      admin('key:create', '--tenant', t.tenant_id, '--scopes', 'products:read', '--expires-in', 'soon'),
    ]);
    expect([scope.code, scope.stdout]).toEqual([2, '']);
    expect(scope.stderr).toMatch(/^error: scopes: Unknown scope "root:all"/);
    expect(scope.stderr.trim().split('\n')).toHaveLength(1);
    expect(expiry.code).toBe(2);
    expect(expiry.stderr).toMatch(/^error: expires_in_seconds: /);
    expect(await testDb()('api_keys').where({ tenant_id: t.tenant_id })).toHaveLength(1);
    const refused = await auditOf(t.tenant_id, 'api_keys.create');
    expect(refused.map((a) => [a.actor_type, a.outcome])).toEqual([
      ['operator', 'invalid_request'],
      ['operator', 'invalid_request'],
    ]);
  }, 120_000);
});
