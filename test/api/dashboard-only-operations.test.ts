import crypto from 'node:crypto';
import { Writable } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApi } from '../../api/openapi';
import { TOOL_LIST } from '../../api/tools/tool-list';
import { SCOPES } from '../../domain/scopes';
import { OPERATIONS } from '../../operations';
import type { KeyActor, UserActor } from '../../operations/actor';
import { ApiError } from '../../operations/errors';
import { executeOperation } from '../../operations/execute';
import type { Services } from '../../operations/services';
import { dashboardOnly, type Surface } from '../../operations/types';
import { createLogger } from '../../runtime/logger';
import { testDb } from '../helpers/db';
import { newTenant, testServices } from '../helpers/api';

/**
 * Operations only a signed-in person may run in the dashboard (`scope: 'account'`: secret keys,
 * the paywall editor) exist on no other surface: no REST route, no tool, no OpenAPI entry, and a
 * key running one anyway (every scope, REST or tool) is refused before anything is written.
 */
const ACCOUNT_OPS = OPERATIONS.filter(dashboardOnly);

/** An input each operation would accept, so a refusal is the policy's and not the validation's. */
const VALID_INPUT: Record<string, Record<string, unknown>> = {
  'api_keys.create': { name: 'from a key', scopes: ['products:read'] },
  'api_keys.revoke': { id: crypto.randomUUID() },
  // The account's reads: the keys (Settings → Developer API) and the team page.
  'api_keys.list': {},
  'team.list': {},
  'paywall.save_draft': { title: 'From a key', skus: ['premium_monthly'] },
  'paywall.publish': {},
  'providers.connect': { provider: 'psp_a', account_ref: 'acct_from_a_key' },
  'providers.connect_oauth': { provider: 'psp_b', code: 'code-from-a-key' },
  'providers.update_credentials': { id: crypto.randomUUID(), webhook_secret: 'whsec_from_a_key' },
  'providers.set_default': { id: crypto.randomUUID() },
  'providers.verify': { id: crypto.randomUUID() },
  'team.invite': { email: 'from-a-key@example.test', role: 'owner' },
  'team.revoke_invitation': { id: crypto.randomUUID() },
  'team.change_role': { user_id: crypto.randomUUID(), role: 'owner' },
  'team.remove': { user_id: crypto.randomUUID() },
  // A key never approves or rejects a held write, least of all its own (docs/approvals.md).
  'changes.approve': { id: crypto.randomUUID() },
  'changes.reject': { id: crypto.randomUUID() },
  // A person's own assistants (docs/assistant-sign-in.md): the consent page's decision, the list, disconnecting.
  'assistants.connect': {
    client_id: 'from-a-key',
    client_name: 'From a key',
    redirect_host: '127.0.0.1:1',
    role: 'viewer',
    hold_writes: false,
  },
  'assistants.deny': { client_id: 'from-a-key', client_name: 'From a key' },
  'assistants.list': {},
  'assistants.revoke': { id: crypto.randomUUID() },
  // Every member's assistants, for owners and admins (the team page).
  'assistants.list_team': {},
  'assistants.disconnect': { id: crypto.randomUUID() },
  // Where scheduled exports go, with the storage's credentials (docs/exports.md).
  'export_destination.save': {
    endpoint: 'https://storage.example',
    region: 'eu-west-1',
    bucket: 'from-a-key',
    access_key_id: 'AKFROMAKEY',
    secret_access_key: 'from-a-key',
  },
};

describe('dashboard-only operations', () => {
  let services: Services;
  let tenantId: string;
  const logged: string[] = [];
  const log = createLogger(
    'debug',
    new Writable({ write: (chunk, _enc, done) => (logged.push(String(chunk)), done()) }),
  );
  const meta = (surface: Surface) => ({ requestId: crypto.randomUUID(), services, log, surface });
  beforeAll(async () => {
    services = testServices();
    tenantId = (await newTenant('account-ops')).tenant_id;
  });

  it('include the secret keys, the paywall editor and provider credentials, all in the operation table', () => {
    expect(ACCOUNT_OPS.map((o) => o.name)).toEqual(
      expect.arrayContaining([
        'api_keys.create',
        'api_keys.revoke',
        'paywall.save_draft',
        'paywall.publish',
        'providers.connect',
        'providers.connect_oauth',
        'providers.update_credentials',
        'providers.set_default',
        'providers.verify',
        'team.invite',
        'team.change_role',
        'team.remove',
        'assistants.connect',
        'assistants.deny',
        'assistants.revoke',
      ]),
    );
    for (const op of ACCOUNT_OPS) expect(Object.keys(VALID_INPUT), op.name).toContain(op.name);
  });

  it('have no REST binding, no tool and no OpenAPI entry', () => {
    const doc = buildOpenApi() as { paths: Record<string, Record<string, { operationId: string }>> };
    const documented = Object.values(doc.paths).flatMap((p) => Object.values(p).map((o) => o.operationId));
    const tools = TOOL_LIST.map((t) => t.operation);
    for (const op of ACCOUNT_OPS) {
      expect([op.name, op.rest]).toEqual([op.name, undefined]);
      expect(tools, op.name).not.toContain(op);
      expect(documented, op.name).not.toContain(op.name);
    }
  });

  it('refuse a key with every scope, on REST and on the tool server (403), writing nothing but the refusal’s audit row', async () => {
    const key: KeyActor = {
      kind: 'api_key',
      tenantId,
      keyId: crypto.randomUUID(),
      keyName: 'all scopes',
      scopes: [...SCOPES],
      expiresAt: null,
    };
    const keysBefore = await testDb()('api_keys')
      .where({ tenant_id: tenantId })
      .count<{ count: string }[]>('id as count');
    for (const op of ACCOUNT_OPS) {
      for (const surface of ['rest', 'tool'] as const) {
        const refusal = await executeOperation(op, key, VALID_INPUT[op.name], meta(surface)).catch((e: unknown) => e);
        expect(refusal, `${op.name} on ${surface}`).toBeInstanceOf(ApiError);
        expect([op.name, surface, (refusal as ApiError).status, (refusal as ApiError).code]).toEqual([
          op.name,
          surface,
          403,
          'insufficient_scope',
        ]);
      }
    }
    // Nor may a person outside the dashboard run them.
    const person: UserActor = { kind: 'user', tenantId, userId: crypto.randomUUID(), role: 'owner' };
    await expect(
      executeOperation(ACCOUNT_OPS[0], person, VALID_INPUT[ACCOUNT_OPS[0].name], meta('rest')),
    ).rejects.toMatchObject({ status: 403 });
    expect(await testDb()('api_keys').where({ tenant_id: tenantId }).count<{ count: string }[]>('id as count')).toEqual(
      keysBefore,
    );
    expect(await testDb()('paywalls').where({ tenant_id: tenantId })).toHaveLength(0);
    expect(await testDb()('assistant_grants').where({ tenant_id: tenantId })).toHaveLength(0);
    const refused = await testDb()('audit_entries').where({
      tenant_id: tenantId,
      actor_type: 'api_key',
      actor_id: key.keyId,
    });
    // Writes are audited, refusals included; a refused read goes to the request log only.
    expect(refused).toHaveLength(ACCOUNT_OPS.filter((op) => op.write).length * 2);
    for (const a of refused) expect(a.outcome).toBe('insufficient_scope');
  });

  it('run for a person in the dashboard; a new key’s value is in the answer only, never in the audit row or the log', async () => {
    // A member of the tenant: the key records who minted it (docs/team.md, "Keys a member mints").
    const [member] = await testDb()('dashboard_users')
      .insert({ tenant_id: tenantId, email: `owner-${crypto.randomUUID()}@example.test`, password_hash: 'x' })
      .returning('id');
    const person: UserActor = { kind: 'user', tenantId, userId: member.id, role: 'owner' };
    const create = ACCOUNT_OPS.find((o) => o.name === 'api_keys.create')!;
    const made = (await executeOperation(
      create,
      person,
      { name: 'ci', scopes: ['products:read', 'products:read'], expires_in_days: 30 },
      meta('dashboard'),
    )) as { id: string; secret: string; scopes: string[] };
    expect(made.secret).toMatch(/^sk_/);
    expect(made.scopes).toEqual(['products:read']);
    const revoke = ACCOUNT_OPS.find((o) => o.name === 'api_keys.revoke')!;
    expect(await executeOperation(revoke, person, { id: made.id }, meta('dashboard'))).toMatchObject({
      id: made.id,
      name: 'ci',
    });
    const audit = await testDb()('audit_entries')
      .where({ tenant_id: tenantId, actor_type: 'user', actor_id: person.userId })
      .orderBy('created_at');
    expect(audit.map((a) => [a.action, a.outcome, a.detail])).toEqual([
      ['api_keys.create', 'ok', { surface: 'dashboard', id: made.id, name: 'ci', scopes: ['products:read'] }],
      ['api_keys.revoke', 'ok', { surface: 'dashboard', id: made.id, name: 'ci' }],
    ]);
    expect(JSON.stringify(audit)).not.toContain(made.secret);
    expect(logged.join('')).not.toContain(made.secret);
    expect((await testDb()('api_keys').where({ id: made.id }).first()).revoked_at).not.toBeNull();
    expect((await testDb()('api_keys').where({ id: made.id }).first()).created_by_user_id).toBe(person.userId);
  });
});
