import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Role } from '../../domain/roles';
import type { UserActor } from '../../operations/actor';
import { executeOperation } from '../../operations/execute';
import { changeMemberRole } from '../../operations/team/change-role';
import { inviteMember } from '../../operations/team/invite';
import { removeTeamMember } from '../../operations/team/remove';
import type { Operation } from '../../operations/types';
import { createLogger } from '../../runtime/logger';
import { testDb } from '../helpers/db';
import { newTenant, startApi } from '../helpers/api';

const log = createLogger('silent');

/**
 * Issue 42, item 4: an invitation outlives its maker's rights. Removing or demoting a member
 * withdraws the pending invitations they may no longer give; acceptance checks the inviter again.
 * The real dashboard listener, the real operations.
 */
describe('an invitation does not outlive its maker’s rights (issue 42, item 4)', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(async () => api?.close());

  const run = (op: Operation, actor: UserActor, input: Record<string, unknown>) =>
    executeOperation(op, actor, input, {
      requestId: crypto.randomUUID(),
      services: api.services,
      log,
      surface: 'dashboard',
    });
  const member = async (tenantId: string, role: Role): Promise<UserActor> => {
    const [u] = await testDb()('dashboard_users')
      .insert({ tenant_id: tenantId, email: `${role}-${crypto.randomUUID()}@example.test`, role, password_hash: 'x' })
      .returning('id');
    return { kind: 'user', tenantId, userId: u.id, role };
  };
  const invite = async (by: UserActor, role: Role) => {
    const email = `invitee-${crypto.randomUUID()}@example.test`;
    const made = (await run(inviteMember as Operation, by, { email, role })) as { token: string };
    return { email, token: made.token };
  };

  /** The link opened and sent with a password, as its holder's browser does. */
  async function accept(token: string) {
    const root = api.dashboardRoot;
    const opened = await fetch(`${root}/invitations/${token}`);
    const cookie = (opened.headers.get('set-cookie') ?? '').split(';')[0];
    const text = await opened.text();
    const csrf =
      /name="_csrf" value="([^"]+)"/.exec(text)?.[1] ??
      /name="_csrf" value="([^"]+)"/.exec(await (await fetch(`${root}/login`, { headers: { cookie } })).text())![1];
    const sent = await fetch(`${root}/invitations/${token}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrf, password: 'a long enough password' }),
    });
    return { opened: opened.status, openedText: text, sent: sent.status, sentText: await sent.text() };
  }
  const memberships = (tenantId: string, email: string) =>
    testDb()('dashboard_users').where({ tenant_id: tenantId, email }).whereNull('removed_at');

  it('the probe: an admin invites an address, is removed, and the link no longer yields membership', async () => {
    const { tenant_id } = await newTenant('inv-removed');
    const owner = await member(tenant_id, 'owner');
    const admin = await member(tenant_id, 'admin');
    const kept = await invite(admin, 'admin');
    await run(removeTeamMember as Operation, owner, { user_id: admin.userId });

    const got = await accept(kept.token);
    expect([got.opened, got.sent]).toEqual([410, 410]);
    expect(await memberships(tenant_id, kept.email)).toHaveLength(0);
    const row = await testDb()('team_invitations').where({ tenant_id, email: kept.email }).first();
    expect(row.revoked_at).not.toBeNull();
    expect(row.accepted_at).toBeNull();
  });

  it('an admin demoted to developer: their admin-role and developer-role invitations stop working (a developer may hand out no role)', async () => {
    const { tenant_id } = await newTenant('inv-demoted');
    const owner = await member(tenant_id, 'owner');
    const admin = await member(tenant_id, 'admin');
    const asAdmin = await invite(admin, 'admin');
    const asDeveloper = await invite(admin, 'developer');
    // Another admin's invitation is not theirs: it stays.
    const other = await invite(await member(tenant_id, 'admin'), 'support');
    await run(changeMemberRole as Operation, owner, { user_id: admin.userId, role: 'developer' });

    for (const inv of [asAdmin, asDeveloper]) {
      const got = await accept(inv.token);
      expect([inv.email, got.opened, got.sent]).toEqual([inv.email, 410, 410]);
      expect(await memberships(tenant_id, inv.email)).toHaveLength(0);
    }
    expect((await accept(other.token)).sent).toBe(303);
    expect(await memberships(tenant_id, other.email)).toMatchObject([{ role: 'support' }]);
  });

  it('an owner demoted to admin: their owner-role invitation stops working, the admin-role one still works', async () => {
    const { tenant_id } = await newTenant('inv-owner-demoted');
    const first = await member(tenant_id, 'owner');
    const second = await member(tenant_id, 'owner');
    const ownerInvite = await invite(second, 'owner');
    const adminInvite = await invite(second, 'admin');
    await run(changeMemberRole as Operation, first, { user_id: second.userId, role: 'admin' });

    const refused = await accept(ownerInvite.token);
    expect([refused.opened, refused.sent]).toEqual([410, 410]);
    expect(await memberships(tenant_id, ownerInvite.email)).toHaveLength(0);
    expect((await accept(adminInvite.token)).sent).toBe(303);
    expect(await memberships(tenant_id, adminInvite.email)).toMatchObject([{ role: 'admin' }]);
  });

  it('at acceptance the inviter is checked again: an invitation whose maker lost the right is refused with a clear page, nothing written', async () => {
    const { tenant_id } = await newTenant('inv-stale');
    await member(tenant_id, 'owner');
    const admin = await member(tenant_id, 'admin');
    const removedLater = await member(tenant_id, 'admin');
    const stale = await invite(admin, 'admin');
    const orphan = await invite(removedLater, 'viewer');
    // Invitations made before removal and demotion withdrew them (or a write that bypassed the
    // operations): no write path leaves them live now, so the rows are changed by hand.
    await testDb()('dashboard_users').where({ id: admin.userId }).update({ role: 'viewer' });
    await testDb()('dashboard_users').where({ id: removedLater.userId }).update({ removed_at: new Date() });

    for (const inv of [stale, orphan]) {
      const got = await accept(inv.token);
      expect([got.opened, got.sent]).toEqual([403, 403]);
      for (const text of [got.openedText, got.sentText])
        expect(text).toContain('whoever made this invitation may no longer give this role');
      expect(await memberships(tenant_id, inv.email)).toHaveLength(0);
      const row = await testDb()('team_invitations').where({ tenant_id, email: inv.email }).first();
      expect([row.accepted_at, row.accepted_by]).toEqual([null, null]);
    }
    expect(await testDb()('audit_entries').where({ tenant_id, action: 'team.accept' })).toHaveLength(0);
  });
});
