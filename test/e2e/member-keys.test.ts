import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { createSession } from '../../db/dashboard-users';
import { scopesOfRole, type Role } from '../../domain/roles';
import { SCOPES, scopeDescription } from '../../domain/scopes';
import { SESSION_COOKIE } from '../../api/dashboard/session';
import { call } from '../helpers/api';
import { testDb } from '../helpers/db';
import { makeTenant } from '../helpers/factories';
import { dashboardHarness, expectAccessible, uniqueEmail } from './helpers/browser';

/**
 * The keys a member mints (docs/team.md, "Keys a member mints"): the form offers only what the
 * role holds, the key names its minter on the keys and team pages, and removing the member
 * revokes them when asked (ticked by default) so they answer 401 at once.
 */
describe('dashboard: keys a member mints', () => {
  const h = dashboardHarness();
  const root = () => h.api.dashboardRoot;

  async function member(tenantId: string, role: Role): Promise<{ page: Page; id: string; email: string }> {
    const email = uniqueEmail(role);
    const [user] = await testDb()('dashboard_users')
      .insert({ tenant_id: tenantId, email, role, password_hash: 'unused: signed in by cookie' })
      .returning(['id', 'tenant_id', 'email', 'role']);
    const session = await createSession(testDb(), user);
    const ctx = await h.browser.newContext();
    await ctx.addCookies([{ name: SESSION_COOKIE, value: session.token, url: root() }]);
    return { page: await ctx.newPage(), id: user.id, email };
  }

  const offeredScopes = (p: Page) =>
    p
      .locator('form[action="/settings/developer-api/keys"] input[name="scopes"]')
      .evaluateAll((els) => els.map((e) => (e as HTMLInputElement).value));

  async function mint(p: Page, name: string, scopes: string[]): Promise<string> {
    await p.goto(`${root()}/settings/developer-api`);
    await p.getByLabel('Name').fill(name);
    for (const s of scopes) await p.getByLabel(s, { exact: true }).check();
    await p.getByRole('button', { name: 'Create key' }).click();
    await p.waitForURL(`${root()}/settings/developer-api`);
    return p.getByLabel('Secret key', { exact: true }).inputValue();
  }

  it('each scope on the form carries its description from the scope table, as the box’s accessible description', async () => {
    const owner = await member((await makeTenant('form-descriptions')).tenant_id, 'owner');
    await owner.page.goto(`${root()}/settings/developer-api`);
    const described = await owner.page
      .locator('form[action="/settings/developer-api/keys"] input[name="scopes"]')
      .evaluateAll((els) =>
        els.map((e) => [
          (e as HTMLInputElement).value,
          document.getElementById(e.getAttribute('aria-describedby') ?? '')?.textContent ?? '',
        ]),
      );
    expect(described).toEqual(SCOPES.map((s) => [s, scopeDescription(s)]));
  });

  it("the key form offers a developer only the developer's scopes; a crafted grants:write is refused and writes nothing", async () => {
    const t = await makeTenant('form-ceiling');
    const dev = await member(t.tenant_id, 'developer');
    await dev.page.goto(`${root()}/settings/developer-api`);
    const offered = await offeredScopes(dev.page);
    expect(offered).toEqual(SCOPES.filter((s) => scopesOfRole('developer').includes(s)));
    expect(offered).not.toContain('grants:write');

    // An owner's form offers every scope.
    const owner = await member(t.tenant_id, 'owner');
    await owner.page.goto(`${root()}/settings/developer-api`);
    expect(await offeredScopes(owner.page)).toEqual([...SCOPES]);

    // The button is not the only way to post: the operation holds the line whatever the form sent.
    const csrf = await dev.page.locator('input[name="_csrf"]').first().inputValue();
    const crafted = await dev.page.request.post(`${root()}/settings/developer-api/keys`, {
      form: { _csrf: csrf, name: 'sneaky', scopes: 'grants:write' },
      maxRedirects: 0,
    });
    expect(crafted.status()).toBe(403);
    expect(await crafted.text()).toContain('grants:write');
    expect(await testDb()('api_keys').where({ tenant_id: t.tenant_id, name: 'sneaky' })).toEqual([]);
    await dev.page.context().close();
    await owner.page.context().close();
  });

  it('the minter is shown on the keys and team pages; removing them with the box ticked makes their keys 401 on /v1/tenant at once', async () => {
    const t = await makeTenant('remove-minter');
    const owner = await member(t.tenant_id, 'owner');
    const dev = await member(t.tenant_id, 'developer');
    const devKey = await mint(dev.page, 'dev ci', ['tenant:read']);
    const ownerKey = await mint(owner.page, 'owner ci', ['tenant:read']);
    expect((await call(h.api.apiUrl, '/tenant', devKey)).status).toBe(200);

    // Keys page: each key names who minted it; the tenant's first key is the operator's.
    await owner.page.goto(`${root()}/settings/developer-api`);
    const keyRow = (name: string) => owner.page.getByRole('row').filter({ hasText: name });
    await expect(keyRow('dev ci').textContent()).resolves.toContain(dev.email);
    await expect(keyRow('owner ci').textContent()).resolves.toContain(owner.email);
    await expect(keyRow('initial').textContent()).resolves.toContain('Operator');

    // Team page: per member, the keys they minted, and removal offers revoking them, ticked.
    await owner.page.goto(`${root()}/settings/team`);
    const devRow = owner.page.getByRole('row').filter({ hasText: dev.email });
    await expect(devRow.getByRole('cell').nth(3).textContent()).resolves.toBe('dev ci');
    const revokeBox = owner.page.getByLabel(`Also revoke the key ${dev.email} minted`);
    await expect(revokeBox.isChecked()).resolves.toBe(true);
    await expectAccessible(owner.page, 'team with keys minted');
    await owner.page.getByRole('button', { name: `Remove ${dev.email}` }).click();
    await expect(owner.page.getByRole('status').textContent()).resolves.toContain('the key they minted is revoked');

    const gone = await call(h.api.apiUrl, '/tenant', devKey);
    expect([gone.status, gone.body.error]).toEqual([401, 'invalid_api_key']);
    expect((await call(h.api.apiUrl, '/tenant', ownerKey)).status).toBe(200);
    const [audit] = await testDb()('audit_entries').where({ tenant_id: t.tenant_id, action: 'team.remove' });
    expect([audit.actor_id, audit.outcome, audit.detail.revoked_keys.length]).toEqual([owner.id, 'ok', 1]);
    await dev.page.context().close();
    await owner.page.context().close();
  });
});
