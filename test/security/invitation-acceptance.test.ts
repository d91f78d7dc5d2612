import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUpUser } from '../../db/dashboard-users';
import type { UserActor } from '../../operations/actor';
import { executeOperation } from '../../operations/execute';
import { inviteMember } from '../../operations/team/invite';
import type { Operation } from '../../operations/types';
import { createLogger } from '../../runtime/logger';
import { hashPassword } from '../../runtime/passwords';
import { newTenant, startApi, testServices } from '../helpers/api';
import { testDb } from '../helpers/db';

const log = createLogger('silent');
// Log-in allowances are kept per address in one table for the whole run: this file draws from
// 198.19.0.0/16, which no other file uses (they draw from 198.18.0.0/16), so another file's
// attempts never spend the allowance this file counts (a full run once saw [303, 303, 429, 429]).
const ipv4 = () => `198.19.${crypto.randomInt(256)}.${1 + crypto.randomInt(254)}`;
const email = (tag: string) => `${tag}-${crypto.randomBytes(4).toString('hex')}@example.test`;

/**
 * Issue 42, low item: accepting an invitation. One answer whether or not the email already has an
 * account; the log-in allowances spent before the password is hashed; the address is not proven
 * (no mail path), and the pages say so truly (docs/team.md).
 */
describe('accepting an invitation (issue 42, low item)', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  beforeAll(async () => {
    const base = testServices().config;
    api = await startApi({
      config: {
        ...base,
        trustedProxies: ['127.0.0.1', '::1'],
        // Small allowances so the test reaches them; the rule is the same at any size.
        dashboardLimits: {
          ...base.dashboardLimits,
          ip: { max: 3, windowSeconds: 900 },
          account: { max: 4, windowSeconds: 900 },
        },
      },
    });
  });
  afterAll(async () => api?.close());

  const owner = async (): Promise<UserActor> => {
    const { tenant_id } = await newTenant('accept');
    const [u] = await testDb()('dashboard_users')
      .insert({ tenant_id, email: email('owner'), role: 'owner', password_hash: 'x' })
      .returning('id');
    return { kind: 'user', tenantId: tenant_id, userId: u.id, role: 'owner' };
  };
  const invite = async (by: UserActor, to: string) =>
    (
      (await executeOperation(
        inviteMember as Operation,
        by,
        { email: to, role: 'developer' },
        { requestId: crypto.randomUUID(), services: api.services, log, surface: 'dashboard' },
      )) as { token: string }
    ).token;

  /** The link opened and sent from one client address, as its holder's browser does. */
  async function accept(token: string, address = ipv4(), password = 'a long enough password') {
    const root = api.dashboardRoot;
    const headers = { 'x-forwarded-for': address };
    const opened = await fetch(`${root}/invitations/${token}`, { headers });
    const cookie = (opened.headers.get('set-cookie') ?? '').split(';')[0];
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await opened.text())![1];
    const sent = await fetch(`${root}/invitations/${token}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { ...headers, cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrf, password }),
    });
    const body = await sent.text();
    const location = sent.headers.get('location');
    const then = location ? await (await fetch(root + location, { headers: { ...headers, cookie } })).text() : '';
    return {
      status: sent.status,
      location,
      body,
      retryAfter: sent.headers.get('retry-after'),
      cookies: sent.headers.getSetCookie().map((c) => c.split('=')[0]),
      then: then.replace(/name="_csrf" value="[^"]+"/g, ''),
    };
  }
  const membersOf = (tenantId: string, address: string) =>
    testDb()('dashboard_users').where({ tenant_id: tenantId, email: address }).whereNull('removed_at');

  it('one answer whether or not the email already has an account; the existing account is untouched', async () => {
    const inviter = await owner();
    const fresh = email('fresh');
    const taken = email('taken');
    const existing = await signUpUser(testDb(), {
      email: taken,
      passwordHash: await hashPassword('their own password'),
    });
    const before = await testDb()('dashboard_users').where({ id: existing.id }).first();

    const a = await accept(await invite(inviter, fresh));
    const b = await accept(await invite(inviter, taken));
    expect(a.status).toBe(303);
    expect([b.status, b.location, b.body, b.cookies, b.then]).toEqual([
      a.status,
      a.location,
      a.body,
      a.cookies,
      a.then,
    ]);
    expect(a.then).toContain('log in with the email of the invitation and the password you chose');

    // The fresh address joined; the taken one did not, and its own account is as it was.
    expect(await membersOf(inviter.tenantId, fresh)).toMatchObject([{ role: 'developer' }]);
    expect(await membersOf(inviter.tenantId, taken)).toHaveLength(0);
    expect(await testDb()('dashboard_users').where({ id: existing.id }).first()).toEqual(before);
    // Both links are used: opening either again is the same dead link.
    const rows = await testDb()('team_invitations').where({ tenant_id: inviter.tenantId }).orderBy('email');
    expect(rows.every((r) => r.accepted_at !== null)).toBe(true);
  });

  it('acceptance spends the log-in allowances before hashing a password: per address, then per account; a refusal writes nothing', async () => {
    const inviter = await owner();
    // One address accepting many invitations: its allowance (3 here) runs out.
    const address = ipv4();
    const emails = [0, 1, 2, 3].map(() => email('burst'));
    const tokens = await Promise.all(emails.map((e) => invite(inviter, e)));
    const statuses: number[] = [];
    for (const t of tokens) statuses.push((await accept(t, address)).status);
    expect(statuses).toEqual([303, 303, 303, 429]);
    expect(await membersOf(inviter.tenantId, emails[3])).toHaveLength(0);
    const last = await testDb()('team_invitations').where({ tenant_id: inviter.tenantId, email: emails[3] }).first();
    expect(last.accepted_at).toBeNull();

    // One address invited by five teams, accepted from five addresses: the account's allowance (4 here).
    const target = email('sought');
    const outcomes: { status: number; retryAfter: string | null }[] = [];
    const teams: UserActor[] = [];
    for (let i = 0; i < 5; i++) {
      teams.push(await owner());
      outcomes.push(await accept(await invite(teams[i], target)));
    }
    expect(outcomes.map((o) => o.status)).toEqual([303, 303, 303, 303, 429]);
    expect(Number(outcomes[4].retryAfter)).toBeGreaterThan(0);
    const fifth = await testDb()('team_invitations').where({ tenant_id: teams[4].tenantId }).first();
    expect(fifth.accepted_at).toBeNull();
  });
});
