import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptInvitation } from '../../db/team';
import { withTenant } from '../../db/tenant-tx';
import type { Role } from '../../domain/roles';
import type { UserActor } from '../../operations/actor';
import { executeOperation } from '../../operations/execute';
import type { Services } from '../../operations/services';
import { changeMemberRole } from '../../operations/team/change-role';
import { removeTeamMember } from '../../operations/team/remove';
import { inviteMember } from '../../operations/team/invite';
import type { Operation } from '../../operations/types';
import { createLogger } from '../../runtime/logger';
import { appDb, testDb } from '../helpers/db';
import { newTenant, testServices } from '../helpers/api';

/** The team operations' races: what the browser tests cannot time. */
describe('team operations under concurrency', () => {
  let services: Services;
  const log = createLogger('silent');
  const run = (op: Operation, actor: UserActor, input: Record<string, unknown>) =>
    executeOperation(op, actor, input, { requestId: crypto.randomUUID(), services, log, surface: 'dashboard' }).then(
      () => 'ok',
      (e: { status?: number; code?: string }) => `${e.status} ${e.code}`,
    );
  const member = async (tenantId: string, role: Role): Promise<UserActor> => {
    const [u] = await testDb()('dashboard_users')
      .insert({ tenant_id: tenantId, email: `${role}-${crypto.randomUUID()}@example.test`, role, password_hash: 'x' })
      .returning('id');
    return { kind: 'user', tenantId, userId: u.id, role };
  };
  beforeAll(() => {
    services = testServices();
  });
  afterAll(async () => services.temporal?.connection.close());

  it('two owners demoting each other at once: one succeeds, the other is refused as the last owner', async () => {
    const { tenant_id } = await newTenant('owners');
    const [a, b] = [await member(tenant_id, 'owner'), await member(tenant_id, 'owner')];
    const outcomes = await Promise.all([
      run(changeMemberRole as Operation, a, { user_id: b.userId, role: 'viewer' }),
      run(changeMemberRole as Operation, b, { user_id: a.userId, role: 'viewer' }),
    ]);
    expect(outcomes.sort()).toEqual(['409 last_owner', 'ok']);
    const owners = await testDb()('dashboard_users').where({ tenant_id, role: 'owner' });
    expect(owners).toHaveLength(1);
  });

  it('one invitation accepted twice at once makes one member', async () => {
    const { tenant_id } = await newTenant('accept-race');
    const owner = await member(tenant_id, 'owner');
    const made = (await executeOperation(
      inviteMember as Operation,
      owner,
      { email: `race-${crypto.randomUUID()}@example.test`, role: 'support' },
      { requestId: crypto.randomUUID(), services, log, surface: 'dashboard' },
    )) as { token: string };
    const accept = () => withTenant(appDb(), tenant_id, (trx) => acceptInvitation(trx, tenant_id, made.token, 'hash'));
    const results = await Promise.all([accept(), accept()]);
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await testDb()('dashboard_users').where({ tenant_id, role: 'support' })).toHaveLength(1);
    // And a third try, afterwards, finds nothing to accept.
    expect(await accept()).toBeUndefined();
  });

  it('an admin may not invite an owner; a member already in the team is not invited twice', async () => {
    const { tenant_id } = await newTenant('invite-rules');
    const admin = await member(tenant_id, 'admin');
    expect(await run(inviteMember as Operation, admin, { email: 'boss@example.test', role: 'owner' })).toBe(
      '403 insufficient_scope',
    );
    const email = (await testDb()('dashboard_users').where({ id: admin.userId }).first()).email;
    expect(await run(inviteMember as Operation, admin, { email, role: 'viewer' })).toBe('409 already_member');
    expect(await testDb()('team_invitations').where({ tenant_id })).toHaveLength(0);
  });

  it('a removed member invited again comes back on the same row (the audit trail keeps one id), with the new role', async () => {
    const { tenant_id } = await newTenant('rejoin');
    const owner = await member(tenant_id, 'owner');
    const dev = await member(tenant_id, 'developer');
    const email = (await testDb()('dashboard_users').where({ id: dev.userId }).first()).email;
    expect(await run(removeTeamMember as Operation, owner, { user_id: dev.userId })).toBe('ok');
    const made = (await executeOperation(
      inviteMember as Operation,
      owner,
      { email, role: 'viewer' },
      { requestId: crypto.randomUUID(), services, log, surface: 'dashboard' },
    )) as { token: string };
    const back = await withTenant(appDb(), tenant_id, (trx) => acceptInvitation(trx, tenant_id, made.token, 'new'));
    expect(back).toMatchObject({ id: dev.userId, role: 'viewer' });
    const row = await testDb()('dashboard_users').where({ id: dev.userId }).first();
    expect([row.removed_at, row.password_hash]).toEqual([null, 'new']);
  });
});
