import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { createSession } from '../../db/dashboard-users';
import type { Role } from '../../domain/roles';
import { SESSION_COOKIE } from '../../api/dashboard/session';
import { testDb } from '../helpers/db';
import { makeTenant } from '../helpers/factories';
import { dashboardHarness, expectAccessible, screenshot, signUp, uniqueEmail } from './helpers/browser';

const FORBIDDEN = 'Your role in this account does not allow this; ask an owner or an admin.';
const DEAD_LINK =
  'This invitation link has expired, was withdrawn or was already used. Ask whoever invited you for a new one.';

/**
 * Team and roles (docs/team.md): one browser for the file, one context per person. Members other
 * than the inviting owner are made in the database with a session cookie, so the tests spend
 * their time on what the roles change, not on logging in.
 */
describe('dashboard: team and roles', () => {
  const h = dashboardHarness();
  const root = () => h.api.dashboardRoot;

  interface Person {
    ctx: BrowserContext;
    page: Page;
    id: string;
    email: string;
    tenantId: string;
  }

  async function member(tenantId: string, role: Role): Promise<Person> {
    const email = uniqueEmail(role);
    const [user] = await testDb()('dashboard_users')
      .insert({ tenant_id: tenantId, email, role, password_hash: 'unused: signed in by cookie' })
      .returning(['id', 'tenant_id', 'email', 'role']);
    const session = await createSession(testDb(), user);
    const ctx = await h.browser.newContext();
    await ctx.addCookies([{ name: SESSION_COOKIE, value: session.token, url: root() }]);
    return { ctx, page: await ctx.newPage(), id: user.id, email, tenantId };
  }

  /** A form post made by hand, with the page's own CSRF token: what a person could send without the button. */
  async function craftedPost(p: Page, path: string, form: Record<string, string>) {
    const csrf = await p.locator('input[name="_csrf"]').first().inputValue();
    return p.request.post(root() + path, { form: { _csrf: csrf, ...form }, maxRedirects: 0 });
  }

  const navLinks = async (p: Page) => p.getByRole('navigation', { name: 'Main' }).getByRole('link').allTextContents();
  const audit = (tenantId: string, action: string) =>
    testDb()('audit_entries').where({ tenant_id: tenantId, action }).orderBy('created_at');

  it('an owner invites by email: the link is shown once, works once, and lands the person in the tenant with the role; an expired link is refused', async () => {
    const ownerCtx = await h.browser.newContext();
    const p = await ownerCtx.newPage();
    const ownerEmail = uniqueEmail('owner');
    await signUp(p, root(), ownerEmail);
    const owner = await testDb()('dashboard_users').where({ email: ownerEmail }).first();
    expect(owner.role).toBe('owner');

    await p.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Team' }).click();
    await p.waitForURL('**/settings/team');
    await expectAccessible(p, 'team');
    const invitee = uniqueEmail('Dev');
    await p.getByLabel('Email').fill(invitee);
    await p.getByLabel('Role', { exact: true }).selectOption('developer');
    await p.getByRole('button', { name: 'Create invitation link' }).click();
    const link = await p.getByLabel('Invitation link', { exact: true }).inputValue();
    expect(link).toMatch(/\/invitations\/[A-Za-z0-9_-]{43}$/);
    // The rule as it is (docs/team.md): no mail path, so the link is the only proof, and the page says so.
    await expect(p.locator('section[aria-labelledby="new-invitation"]').textContent()).resolves.toContain(
      'No email is sent and the address is not checked: whoever opens this link chooses the password and joins under this address',
    );
    const token = link.split('/').pop()!;
    await expectAccessible(p, 'team with a new invitation link');
    await screenshot(p, 'team-invitation-link');

    // Only the token's hash is stored; nothing in the invitation row or the audit trail holds the token.
    const [row] = await testDb()('team_invitations').where({ tenant_id: owner.tenant_id });
    expect(row).toMatchObject({ email: invitee.toLowerCase(), role: 'developer', invited_by: owner.id });
    expect(row.token_hash).toBe(crypto.createHash('sha256').update(token).digest('hex'));
    expect(JSON.stringify(row)).not.toContain(token);
    const invited = await audit(owner.tenant_id, 'team.invite');
    expect(invited.map((a) => [a.actor_type, a.actor_id, a.outcome])).toEqual([['user', owner.id, 'ok']]);
    expect(JSON.stringify(invited)).not.toContain(token);

    // Shown once: the team page again lists the invitation but not its link.
    await p.goto(`${root()}/settings/team`);
    await expect(p.getByLabel('Invitation link', { exact: true }).count()).resolves.toBe(0);
    await expect(p.getByRole('region', { name: 'Pending invitations' }).textContent()).resolves.toContain(
      invitee.toLowerCase(),
    );

    // A second browser: the link, a password, and the person is in the owner's tenant as a developer.
    const devCtx = await h.browser.newContext();
    const d = await devCtx.newPage();
    const path = new URL(link).pathname;
    await d.goto(root() + path);
    await expect(d.locator('main').textContent()).resolves.toContain('developer');
    await expectAccessible(d, 'invitation');
    // Too short a password (past the browser's own check) is refused and leaves the link usable.
    const short = await craftedPost(d, path, { password: 'short' });
    expect(short.status()).toBe(400);
    expect(await short.text()).toContain('at least 12 characters');
    await d.getByLabel('Choose a password').fill('developer horse battery staple');
    await d.getByRole('button', { name: 'Join the team' }).click();
    // Not signed in by the acceptance (that would tell an email with an account of its own apart): they log in.
    await d.waitForURL('**/login?joined=1');
    await d.getByLabel('Email').fill(invitee);
    await d.getByLabel('Password').fill('developer horse battery staple');
    await d.getByRole('button', { name: 'Log in' }).click();
    await d.waitForURL('**/overview');
    const joined = await testDb()('dashboard_users').where({ email: invitee.toLowerCase() }).first();
    expect([joined.tenant_id, joined.role]).toEqual([owner.tenant_id, 'developer']);
    const nav = await navLinks(d);
    expect(nav).toEqual(expect.arrayContaining(['Products', 'Developer API', 'Providers']));
    expect(nav).not.toContain('Team');
    const accepted = await audit(owner.tenant_id, 'team.accept');
    expect(accepted.map((a) => [a.actor_type, a.actor_id, a.outcome])).toEqual([['user', joined.id, 'ok']]);

    // Used once: the link (opened or posted) is refused in a fresh browser, and nobody else joins.
    const strangerCtx = await h.browser.newContext();
    const s = await strangerCtx.newPage();
    expect((await s.goto(root() + path))!.status()).toBe(410);
    await expect(s.getByRole('alert').textContent()).resolves.toBe(DEAD_LINK);
    await s.goto(`${root()}/login`);
    const reuse = await craftedPost(s, path, { password: 'stranger horse battery staple' });
    expect(reuse.status()).toBe(410);
    expect(await testDb()('dashboard_users').where({ tenant_id: owner.tenant_id })).toHaveLength(2);

    // Expired: a link past its time is refused, opened or posted.
    await p.getByLabel('Email').fill(uniqueEmail('late'));
    await p.getByLabel('Role', { exact: true }).selectOption('viewer');
    await p.getByRole('button', { name: 'Create invitation link' }).click();
    const late = new URL(await p.getByLabel('Invitation link', { exact: true }).inputValue()).pathname;
    await testDb()('team_invitations')
      .where({ tenant_id: owner.tenant_id, role: 'viewer' })
      .update({ expires_at: new Date(Date.now() - 60_000) });
    expect((await s.goto(root() + late))!.status()).toBe(410);
    await s.goto(`${root()}/login`);
    expect((await craftedPost(s, late, { password: 'latecomer horse battery staple' })).status()).toBe(410);
    expect(await testDb()('dashboard_users').where({ tenant_id: owner.tenant_id })).toHaveLength(2);

    // Removed: the developer's session ends at once, and their password no longer logs in.
    await p.goto(`${root()}/settings/team`);
    await p.getByRole('button', { name: `Remove ${invitee.toLowerCase()}` }).click();
    await expect(p.getByRole('status').textContent()).resolves.toContain('Member removed');
    await d.goto(`${root()}/products`);
    expect(new URL(d.url()).pathname).toBe('/login');
    expect(await testDb()('dashboard_sessions').where({ user_id: joined.id })).toHaveLength(0);
    await d.getByLabel('Email').fill(invitee);
    await d.getByLabel('Password').fill('developer horse battery staple');
    await d.getByRole('button', { name: 'Log in' }).click();
    await expect(d.getByRole('alert').textContent()).resolves.toBe('That email and password do not match an account.');
    const removed = await audit(owner.tenant_id, 'team.remove');
    expect(removed.map((a) => [a.actor_id, a.outcome])).toEqual([[owner.id, 'ok']]);

    for (const c of [ownerCtx, devCtx, strangerCtx]) await c.close();
  });

  it('each role is refused what it may not do: the control is absent and a crafted post is a 403, audited', async () => {
    const { tenant_id: tenantId } = await makeTenant('roles');
    const viewer = await member(tenantId, 'viewer');
    const support = await member(tenantId, 'support');
    const developer = await member(tenantId, 'developer');
    const owner = await member(tenantId, 'owner');
    const products = () => testDb()('products').where({ tenant_id: tenantId });

    // A viewer reads products but sees no way to create one, and a crafted post creates none.
    const v = viewer.page;
    await v.goto(`${root()}/products`);
    await expect(v.getByRole('link', { name: 'New product' }).count()).resolves.toBe(0);
    expect(await navLinks(v)).not.toEqual(expect.arrayContaining(['Developer API']));
    expect(await navLinks(v)).not.toContain('Providers');
    expect(await navLinks(v)).not.toContain('Team');
    const crafted = await craftedPost(v, '/products', { sku: 'viewer_made', name: 'Viewer made' });
    expect(crafted.status()).toBe(403);
    expect(await crafted.text()).toContain(FORBIDDEN);
    expect(await products()).toHaveLength(0);
    await v.goto(`${root()}/webhook-endpoints`);
    await expect(v.getByRole('heading', { name: 'Add an endpoint' }).count()).resolves.toBe(0);
    await v.goto(`${root()}/paywall`);
    await expect(v.getByRole('button', { name: 'Save draft' }).count()).resolves.toBe(0);
    const newPage = await v.goto(`${root()}/products/new`);
    expect(newPage!.status()).toBe(403);
    await expect(v.getByRole('alert').textContent()).resolves.toBe(FORBIDDEN);
    await expectAccessible(v, 'refused page');
    const refusals = await audit(tenantId, 'dashboard.page');
    expect(refusals.map((a) => [a.actor_id, a.outcome, a.detail.method, a.detail.path])).toEqual([
      [viewer.id, 'insufficient_scope', 'POST', '/products'],
      [viewer.id, 'insufficient_scope', 'GET', '/products/new'],
    ]);

    // Support opens neither keys nor credentials, and cannot mint a key by hand.
    const s = support.page;
    for (const path of ['/settings/developer-api', '/providers', '/settings/team']) {
      expect([path, (await s.goto(root() + path))!.status()]).toEqual([path, 403]);
      await expect(s.getByRole('alert').textContent()).resolves.toBe(FORBIDDEN);
    }
    await s.goto(`${root()}/overview`);
    expect(await navLinks(s)).toEqual(expect.arrayContaining(['Overview', 'Products', 'Subscribers', 'Audit trail']));
    expect(await navLinks(s)).not.toEqual(expect.arrayContaining(['Developer API']));
    const key = await craftedPost(s, '/settings/developer-api/keys', { name: 'support key', scopes: 'products:read' });
    expect(key.status()).toBe(403);
    expect(await testDb()('api_keys').where({ tenant_id: tenantId, name: 'support key' })).toHaveLength(0);

    // A developer manages products (and opens keys), but not the team: no invitation, no grant of access.
    const d = developer.page;
    await d.goto(`${root()}/products`);
    await d.getByRole('link', { name: 'New product' }).click();
    await d.getByLabel('SKU').fill('dev_made');
    await d.getByLabel('Name').fill('Developer made');
    await d.getByRole('button', { name: 'Create product' }).click();
    await d.waitForURL(/\/products\/[0-9a-f-]{36}\?created=1$/);
    expect((await products()).map((x) => x.sku)).toEqual(['dev_made']);
    expect((await d.goto(`${root()}/settings/developer-api`))!.status()).toBe(200);
    expect((await d.goto(`${root()}/settings/team`))!.status()).toBe(403);
    const invite = await craftedPost(d, '/settings/team/invitations', { email: 'x@example.test', role: 'owner' });
    expect(invite.status()).toBe(403);
    expect(await testDb()('team_invitations').where({ tenant_id: tenantId })).toHaveLength(0);

    // A role change holds from the member's next request: the viewer, now a developer, sees the control.
    const o = owner.page;
    await o.goto(`${root()}/settings/team`);
    const row = o.getByRole('row').filter({ hasText: viewer.email });
    await row.getByLabel(`Role for ${viewer.email}`).selectOption('developer');
    await row.getByRole('button', { name: 'Change role' }).click();
    await expect(o.getByRole('status').textContent()).resolves.toBe('Role changed to developer.');
    await v.goto(`${root()}/products`);
    await expect(v.getByRole('link', { name: 'New product' }).count()).resolves.toBe(1);
    const changed = await audit(tenantId, 'team.change_role');
    expect(changed.map((a) => [a.actor_type, a.actor_id, a.outcome])).toEqual([['user', owner.id, 'ok']]);
    // The audit trail names the person who changed it.
    await o.goto(`${root()}/audit?action=team.change_role`);
    await expect(o.getByRole('region', { name: 'Audit trail' }).textContent()).resolves.toContain(
      `${owner.email} (${owner.id})`,
    );

    for (const x of [viewer, support, developer, owner]) await x.ctx.close();
  });

  it('the last owner can be neither removed nor demoted; an admin cannot touch an owner; a member of one tenant cannot act in another', async () => {
    const { tenant_id: a } = await makeTenant('team-a');
    const { tenant_id: b } = await makeTenant('team-b');
    const owner = await member(a, 'owner');
    const admin = await member(a, 'admin');
    const support = await member(a, 'support');
    const other = await member(b, 'owner');
    const roleOf = async (id: string) => (await testDb()('dashboard_users').where({ id }).first()).role;

    const o = owner.page;
    await o.goto(`${root()}/settings/team`);
    await o.getByRole('button', { name: `Remove ${owner.email}` }).click();
    await expect(o.getByRole('alert').textContent()).resolves.toBe(
      'The account needs at least one owner: make someone else an owner first.',
    );
    const mine = o.getByRole('row').filter({ hasText: owner.email });
    await mine.getByLabel(`Role for ${owner.email}`).selectOption('viewer');
    const [demote] = await Promise.all([
      o.waitForResponse((r) => r.request().method() === 'POST'),
      mine.getByRole('button', { name: 'Change role' }).click(),
    ]);
    expect(demote.status()).toBe(409);
    expect(await roleOf(owner.id)).toBe('owner');
    expect((await audit(a, 'team.remove')).map((x) => x.outcome)).toEqual(['last_owner']);

    // An admin manages the others but not an owner.
    const ad = admin.page;
    await ad.goto(`${root()}/settings/team`);
    await expect(ad.getByRole('row').filter({ hasText: owner.email }).textContent()).resolves.toContain(
      'Only an owner changes an owner.',
    );
    expect((await craftedPost(ad, `/settings/team/members/${owner.id}/remove`, {})).status()).toBe(403);
    expect((await craftedPost(ad, `/settings/team/members/${support.id}/role`, { role: 'owner' })).status()).toBe(403);
    expect((await craftedPost(ad, `/settings/team/members/${support.id}/role`, { role: 'viewer' })).status()).toBe(200);
    expect([await roleOf(owner.id), await roleOf(support.id)]).toEqual(['owner', 'viewer']);

    // Tenant B's owner: A's members are not found, and nothing of A changes.
    const x = other.page;
    await x.goto(`${root()}/settings/team`);
    expect(await x.locator('main').textContent()).not.toContain(owner.email);
    expect((await craftedPost(x, `/settings/team/members/${support.id}/remove`, {})).status()).toBe(404);
    expect((await craftedPost(x, `/settings/team/members/${owner.id}/role`, { role: 'viewer' })).status()).toBe(404);
    const aInvitation = await testDb()('team_invitations')
      .insert({
        tenant_id: a,
        email: 'a-only@example.test',
        role: 'viewer',
        token_hash: crypto.randomBytes(32).toString('hex'),
        expires_at: new Date(Date.now() + 86_400_000),
      })
      .returning('id');
    expect((await craftedPost(x, `/settings/team/invitations/${aInvitation[0].id}/revoke`, {})).status()).toBe(404);
    const aMembers = await testDb()('dashboard_users').where({ tenant_id: a }).whereNull('removed_at');
    expect(aMembers).toHaveLength(3);
    expect((await testDb()('team_invitations').where({ id: aInvitation[0].id }).first()).revoked_at).toBeNull();

    // With a second owner, the first may step down; the support member's sessions end when removed.
    await craftedPost(o, `/settings/team/members/${admin.id}/role`, { role: 'owner' });
    expect(await roleOf(admin.id)).toBe('owner');
    expect((await craftedPost(o, `/settings/team/members/${support.id}/remove`, {})).status()).toBe(200);
    const after = await support.page.goto(`${root()}/overview`);
    expect(new URL(after!.url()).pathname).toBe('/login');
    expect((await craftedPost(o, `/settings/team/members/${owner.id}/role`, { role: 'viewer' })).status()).toBe(303);
    expect(await roleOf(owner.id)).toBe('viewer');

    for (const p of [owner, admin, support, other]) await p.ctx.close();
  });
});
