import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mayManageAccount, ROLES, scopesOfRole, type Role } from '../../domain/roles';
import { SCOPES } from '../../domain/scopes';
import { createApiKey } from '../../operations/api-keys/create';
import type { UserActor } from '../../operations/actor';
import { executeOperation } from '../../operations/execute';
import type { Services } from '../../operations/services';
import { removeTeamMember } from '../../operations/team/remove';
import { createRevenueCatKeyOp } from '../../operations/revenuecat-keys/create';
import { listRevenueCatKeysOp } from '../../operations/revenuecat-keys/list';
import { revokeRevenueCatKeyOp } from '../../operations/revenuecat-keys/revoke';
import type { Operation } from '../../operations/types';
import { createLogger } from '../../runtime/logger';
import { testDb } from '../helpers/db';
import { newTenant, testServices } from '../helpers/api';

/** A role is a ceiling for the keys its members mint (docs/team.md, "Keys a member mints"). */
describe('the keys a member mints', () => {
  let services: Services;
  const log = createLogger('silent');
  const run = (op: Operation, actor: UserActor, input: Record<string, unknown>) =>
    executeOperation(op, actor, input, { requestId: crypto.randomUUID(), services, log, surface: 'dashboard' });
  const outcome = (op: Operation, actor: UserActor, input: Record<string, unknown>) =>
    run(op, actor, input).then(
      () => 'ok',
      (e: { status?: number; code?: string; extra?: { param?: string } }) =>
        `${e.status} ${e.code}${e.extra?.param ? ` ${e.extra.param}` : ''}`,
    );
  const member = async (tenantId: string, role: Role): Promise<UserActor> => {
    const [u] = await testDb()('dashboard_users')
      .insert({ tenant_id: tenantId, email: `${role}-${crypto.randomUUID()}@example.test`, role, password_hash: 'x' })
      .returning('id');
    return { kind: 'user', tenantId, userId: u.id, role };
  };
  const keysOf = (tenantId: string) =>
    testDb()('api_keys').where({ tenant_id: tenantId }).whereNot({ name: 'initial' });

  beforeAll(() => {
    services = testServices();
  });
  afterAll(async () => services.temporal?.connection.close());

  it('a developer asking for grants:write is refused, naming the scope; no key is written and the audit row has the code', async () => {
    const { tenant_id } = await newTenant('dev-grants');
    const dev = await member(tenant_id, 'developer');
    const refusal = await run(createApiKey as Operation, dev, {
      name: 'premium by the back door',
      scopes: ['products:read', 'grants:write'],
    }).catch((e: unknown) => e);
    expect(refusal).toMatchObject({ status: 403, code: 'insufficient_scope', extra: { param: 'scopes' } });
    expect((refusal as Error).message).toContain('"grants:write"');
    expect((refusal as Error).message).not.toContain('"products:read"');
    expect(await keysOf(tenant_id)).toEqual([]);
    const audit = await testDb()('audit_entries').where({ tenant_id, action: 'api_keys.create' });
    expect(audit.map((a) => [a.actor_type, a.actor_id, a.outcome])).toEqual([
      ['user', dev.userId, 'insufficient_scope'],
    ]);
  });

  // Every role of domain/roles.ts: a role that manages keys mints exactly its own scopes, each
  // other scope alone is refused; a role that does not manage keys mints nothing.
  it.each(ROLES.map((role) => [role]))('%s mints what the role holds and no more', async (role) => {
    const { tenant_id } = await newTenant(`ceiling-${role}`);
    const person = await member(tenant_id, role);
    const held = scopesOfRole(role);
    const beyond = SCOPES.filter((s) => !held.includes(s));
    if (!mayManageAccount(role, 'credentials')) {
      expect(await outcome(createApiKey as Operation, person, { name: 'k', scopes: held })).toBe(
        '403 insufficient_scope',
      );
      expect(await keysOf(tenant_id)).toEqual([]);
      return;
    }
    expect(await outcome(createApiKey as Operation, person, { name: 'all mine', scopes: held })).toBe('ok');
    for (const scope of beyond)
      expect([scope, await outcome(createApiKey as Operation, person, { name: 'more', scopes: [scope] })]).toEqual([
        scope,
        '403 insufficient_scope scopes',
      ]);
    const keys = await keysOf(tenant_id);
    expect(keys.map((k) => [k.name, [...k.scopes].sort(), k.created_by_user_id])).toEqual([
      ['all mine', [...held].sort(), person.userId],
    ]);
  });

  it('removing a member with revoke_keys revokes the keys they minted, in the same write; without it their keys stay', async () => {
    const { tenant_id } = await newTenant('remove-keys');
    const owner = await member(tenant_id, 'owner');
    const [leaving, staying, other] = [
      await member(tenant_id, 'developer'),
      await member(tenant_id, 'developer'),
      await member(tenant_id, 'admin'),
    ];
    for (const [who, name] of [
      [leaving, 'leaving-1'],
      [leaving, 'leaving-2'],
      [staying, 'staying'],
      [other, 'other'],
    ] as const)
      await run(createApiKey as Operation, who, { name, scopes: ['products:read'] });

    const removed = (await run(removeTeamMember as Operation, owner, {
      user_id: leaving.userId,
      revoke_keys: true,
    })) as { revoked_keys: string[] };
    await run(removeTeamMember as Operation, owner, { user_id: staying.userId });

    const keys = await keysOf(tenant_id).orderBy('name');
    expect(keys.map((k) => [k.name, k.revoked_at !== null])).toEqual([
      ['leaving-1', true],
      ['leaving-2', true],
      ['other', false],
      ['staying', false],
    ]);
    expect([...removed.revoked_keys].sort()).toEqual(
      keys
        .filter((k) => k.name.startsWith('leaving'))
        .map((k) => k.id)
        .sort(),
    );
    const [audit] = await testDb()('audit_entries')
      .where({ tenant_id, action: 'team.remove', actor_id: owner.userId })
      .orderBy('created_at');
    expect(audit.detail.revoked_keys.sort()).toEqual([...removed.revoked_keys].sort());
  });

  it('keys for RevenueCat’s SDKs: every role that reads sees them (hints only), only a role that may create apps mints or revokes', async () => {
    const { tenant_id } = await newTenant('rc-key-roles');
    const owner = await member(tenant_id, 'owner');
    const made = (await run(createRevenueCatKeyOp as Operation, owner, { platform: 'ios' })) as Record<string, string>;
    expect(made).toMatchObject({ platform: 'ios', mode: 'test', public_key: expect.stringMatching(/^appl_/) });
    for (const role of ROLES) {
      const person = await member(tenant_id, role);
      const listed = (await run(listRevenueCatKeysOp as Operation, person, {})) as { data: Record<string, unknown>[] };
      // Newest first: the keys the roles before minted come ahead of the owner's first one.
      expect(listed.data.map((k) => [k.id, k.key_hint]).at(-1)).toEqual([made.id, made.key_hint]);
      expect(JSON.stringify(listed)).not.toContain(made.public_key);
      const mayWrite = scopesOfRole(role).includes('apps:write');
      expect([
        role,
        await outcome(createRevenueCatKeyOp as Operation, person, { platform: 'web', mode: 'live' }),
      ]).toEqual([role, mayWrite ? 'ok' : '403 insufficient_scope']);
      expect([role, await outcome(revokeRevenueCatKeyOp as Operation, person, { id: made.id })]).toEqual([
        role,
        mayWrite ? 'ok' : '403 insufficient_scope',
      ]);
    }
    // Bad input names its field; another tenant's key id is not found.
    expect(await outcome(createRevenueCatKeyOp as Operation, owner, { platform: 'windows' })).toBe(
      '400 invalid_request platform',
    );
    const other = await newTenant('rc-key-other');
    const theirs = (await run(createRevenueCatKeyOp as Operation, await member(other.tenant_id, 'owner'), {
      platform: 'android',
    })) as Record<string, string>;
    expect(await outcome(revokeRevenueCatKeyOp as Operation, owner, { id: theirs.id })).toBe('404 not_found');
    expect(await outcome(revokeRevenueCatKeyOp as Operation, owner, { id: 'not-a-uuid' })).toBe('404 not_found');
    expect(await testDb()('revenuecat_keys').where({ id: theirs.id }).first('revoked_at')).toEqual({
      revoked_at: null,
    });
  });
});
