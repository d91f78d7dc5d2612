import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertAssistantGrant } from '../../db/assistant-grants';
import { OAuthRecords } from '../../db/oauth-records';
import { withTenant } from '../../db/tenant-tx';
import type { Role } from '../../domain/roles';
import type { UserActor } from '../../operations/actor';
import { disconnectMemberAssistant } from '../../operations/assistants/disconnect';
import { listTeamAssistants } from '../../operations/assistants/list-team';
import { executeOperation } from '../../operations/execute';
import type { Services } from '../../operations/services';
import type { Operation } from '../../operations/types';
import { createLogger } from '../../runtime/logger';
import { appDb, testDb } from '../helpers/db';
import { newTenant, testServices } from '../helpers/api';

/**
 * Owners and admins see and disconnect any member's assistants (docs/assistant-sign-in.md, "The
 * team's assistants"): the policy (the team area), the owner rule (only an owner touches an
 * owner's), tenant isolation (another tenant's assistant is a 404, and never listed), what a
 * disconnect deletes, and its audit row. The page and the assistant's 401 are
 * test/e2e/team-assistants.test.ts.
 */
describe('the team’s connected assistants', () => {
  let services: Services;
  const log = createLogger('silent');
  const run = (op: Operation, actor: UserActor, input: Record<string, unknown> = {}) =>
    executeOperation(op, actor, input, { requestId: crypto.randomUUID(), services, log, surface: 'dashboard' });
  const outcome = (p: Promise<unknown>) =>
    p.then(
      () => 'ok',
      (e: { status?: number; code?: string }) => `${e.status} ${e.code}`,
    );
  const member = async (tenantId: string, role: Role): Promise<UserActor & { email: string }> => {
    const email = `${role}-${crypto.randomUUID()}@example.test`;
    const [u] = await testDb()('dashboard_users')
      .insert({ tenant_id: tenantId, email, role, password_hash: 'x' })
      .returning('id');
    return { kind: 'user', tenantId, userId: u.id, role, email };
  };
  /** A consent as the consent page records it, with a token of its grant as the authorization server stores it. */
  const connect = async (person: UserActor, name: string) => {
    const grantId = crypto.randomBytes(16).toString('hex');
    const row = await withTenant(appDb(), person.tenantId, (trx) =>
      insertAssistantGrant(trx, {
        tenant_id: person.tenantId,
        user_id: person.userId,
        grant_id: grantId,
        client_id: `client-${name}`,
        client_name: name,
        redirect_host: '127.0.0.1:1',
        role: 'viewer',
        hold_writes: false,
      }),
    );
    await new OAuthRecords(appDb(), 'AccessToken').upsert(
      `token-${grantId}`,
      { grantId, clientId: `client-${name}` },
      3600,
    );
    return row;
  };
  const records = (grantId: string) => testDb()('oauth_records').where({ grant_id: grantId });
  const listed = async (actor: UserActor) =>
    ((await run(listTeamAssistants as Operation, actor)) as { data: { id: string; member_email: string }[] }).data;

  let a: {
    owner: Awaited<ReturnType<typeof member>>;
    owner2: Awaited<ReturnType<typeof member>>;
    admin: UserActor;
    developer: Awaited<ReturnType<typeof member>>;
    viewer: UserActor;
  };
  let otherOwner: UserActor;
  beforeAll(async () => {
    services = testServices();
    const t = (await newTenant('team-assistants')).tenant_id;
    a = {
      owner: await member(t, 'owner'),
      owner2: await member(t, 'owner'),
      admin: await member(t, 'admin'),
      developer: await member(t, 'developer'),
      viewer: await member(t, 'viewer'),
    };
    otherOwner = await member((await newTenant('team-assistants-other')).tenant_id, 'owner');
  });
  afterAll(async () => services.temporal?.connection.close());

  it('owners and admins list every member’s live assistants with whose each is; other roles are refused', async () => {
    const dev = await connect(a.developer, 'Dev Assistant');
    const own = await connect(a.owner2, 'Owner Assistant');
    const theirs = await connect(otherOwner, 'Other Tenant Assistant');
    for (const who of [a.owner, a.admin]) {
      const rows = await listed(who);
      expect(rows.map((r) => r.id)).toEqual(expect.arrayContaining([dev.id, own.id]));
      expect(rows.find((r) => r.id === dev.id)?.member_email).toBe(a.developer.email);
      expect(rows.map((r) => r.id)).not.toContain(theirs.id);
    }
    expect((await listed(otherOwner)).map((r) => r.id)).toEqual([theirs.id]);
    for (const who of [a.developer, a.viewer])
      expect(await outcome(run(listTeamAssistants as Operation, who))).toBe('403 insufficient_scope');
  });

  it('a viewer or developer cannot disconnect another’s; an admin cannot disconnect an owner’s; another tenant’s owner gets a 404; nothing changes', async () => {
    const dev = await connect(a.developer, 'Kept Assistant');
    const own = await connect(a.owner2, 'Owner Kept Assistant');
    expect(await outcome(run(disconnectMemberAssistant as Operation, a.viewer, { id: dev.id }))).toBe(
      '403 insufficient_scope',
    );
    expect(await outcome(run(disconnectMemberAssistant as Operation, a.developer, { id: own.id }))).toBe(
      '403 insufficient_scope',
    );
    expect(await outcome(run(disconnectMemberAssistant as Operation, a.admin, { id: own.id }))).toBe(
      '403 insufficient_scope',
    );
    expect(await outcome(run(disconnectMemberAssistant as Operation, otherOwner, { id: dev.id }))).toBe(
      '404 not_found',
    );
    expect(await outcome(run(disconnectMemberAssistant as Operation, otherOwner, { id: 'not-an-id' }))).toBe(
      '404 not_found',
    );
    const rows = await testDb()('assistant_grants').whereIn('id', [dev.id, own.id]);
    expect(rows.map((r) => r.revoked_at)).toEqual([null, null]);
    expect(await records(dev.grant_id)).toHaveLength(1);
    expect(await records(own.grant_id)).toHaveLength(1);
    // Each refusal is audited as the person's, with the code they were answered.
    const refused = await testDb()('audit_entries')
      .where({ action: 'assistants.disconnect' })
      .whereIn('actor_id', [a.viewer.userId, a.developer.userId, a.admin.userId, otherOwner.userId]);
    expect(refused.map((r) => r.outcome).sort()).toEqual([
      'insufficient_scope',
      'insufficient_scope',
      'insufficient_scope',
      'not_found',
      'not_found',
    ]);
  });

  it('an admin disconnects a developer’s, an owner an owner’s: revoked, its records deleted, audited with the member; again changes nothing', async () => {
    const dev = await connect(a.developer, 'Gone Assistant');
    const own = await connect(a.owner2, 'Owner Gone Assistant');
    const done = (await run(disconnectMemberAssistant as Operation, a.admin, { id: dev.id })) as Record<
      string,
      unknown
    >;
    expect(done).toMatchObject({
      id: dev.id,
      name: 'Gone Assistant',
      member_id: a.developer.userId,
      already_revoked: false,
    });
    expect((await testDb()('assistant_grants').where({ id: dev.id }).first()).revoked_at).toBeInstanceOf(Date);
    expect(await records(dev.grant_id)).toEqual([]);
    expect((await listed(a.owner)).map((r) => r.id)).not.toContain(dev.id);
    const [audit] = await testDb()('audit_entries').where({
      action: 'assistants.disconnect',
      actor_id: a.admin.userId,
      outcome: 'ok',
    });
    expect(audit.detail).toMatchObject({
      surface: 'dashboard',
      id: dev.id,
      name: 'Gone Assistant',
      client_id: 'client-Gone Assistant',
      member_id: a.developer.userId,
    });
    expect(await run(disconnectMemberAssistant as Operation, a.owner, { id: own.id })).toMatchObject({
      member_id: a.owner2.userId,
      already_revoked: false,
    });
    expect(await records(own.grant_id)).toEqual([]);
    expect(await run(disconnectMemberAssistant as Operation, a.owner, { id: own.id })).toMatchObject({
      already_revoked: true,
    });
  });
});
