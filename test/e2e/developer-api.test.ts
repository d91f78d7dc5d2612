import { describe, expect, it } from 'vitest';
import { createSession } from '../../db/dashboard-users';
import { SESSION_COOKIE } from '../../api/dashboard/session';
import { testDb } from '../helpers/db';
import { expectAccessible, screenshot, signUp, uniqueEmail, dashboardHarness } from './helpers/browser';

describe('dashboard: Settings → Developer API in a real browser', () => {
  const h = dashboardHarness();

  it('sign-up → create a key with products:read → GET /v1/products 200 → revoke → 401', async () => {
    const ctx = await h.browser.newContext();
    const p = await ctx.newPage();
    const email = uniqueEmail('keys');
    await signUp(p, h.api.dashboardRoot, email);

    // Sign-up made a free-tier tenant with a first app and its test publishable key, and the person as its user.
    const db = testDb();
    const user = await db('dashboard_users').where({ email }).first();
    expect(user.password_hash).toMatch(/^\$argon2id\$/);
    const tenant = await db('tenants').where({ id: user.tenant_id }).first();
    expect(tenant.plan).toBe('free');
    const apps = await db('apps').where({ tenant_id: user.tenant_id });
    expect(apps).toHaveLength(1);
    expect(apps[0].publishable_key_test).toMatch(/^pk_test_/);
    const session = await db('dashboard_sessions').where({ user_id: user.id }).first();
    const cookies = await ctx.cookies();
    const sessionCookie = cookies.find((c) => c.name === 'dash_session')!;
    expect(sessionCookie).toMatchObject({ httpOnly: true, sameSite: 'Lax' });
    expect(session.token_hash).not.toBe(sessionCookie.value); // only a hash is stored
    expect(session.token_hash).toMatch(/^[0-9a-f]{64}$/);

    await p.getByRole('link', { name: 'Developer API' }).click();
    await screenshot(p, 'developer-api');
    await p.getByLabel('Name').fill('ci deploy');
    await p.getByLabel('products:read', { exact: true }).check();
    await p.getByLabel('Expires after (days, optional)').fill('30');
    await p.getByRole('button', { name: 'Create key' }).click();
    const secret = await p.getByLabel('Secret key', { exact: true }).inputValue();
    expect(secret).toMatch(/^sk_/);
    await expect(p.getByRole('button', { name: 'Copy', exact: true }).count()).resolves.toBe(1);
    await screenshot(p, 'developer-api-key-created');

    const call = () => fetch(`${h.api.apiUrl}/products`, { headers: { authorization: `Bearer ${secret}` } });
    expect((await call()).status).toBe(200);

    // The list shows the key by name with its scopes and expiry, never the value again.
    await p.goto(`${h.api.dashboardRoot}/settings/developer-api`);
    const row = p.getByRole('row', { name: /ci deploy/ });
    await expect(row.textContent()).resolves.toContain('products:read');
    expect(await p.content()).not.toContain(secret);

    await row.getByRole('button', { name: 'Revoke' }).click();
    await p.getByText('revoked', { exact: false }).first().waitFor();
    expect((await call()).status).toBe(401);

    const audit = await db('audit_entries')
      .where({ tenant_id: user.tenant_id, actor_type: 'user' })
      .orderBy('created_at');
    // The key writes are the operations' audit rows, the person's, from the dashboard.
    expect(audit.map((a) => a.action)).toEqual([
      'account.sign_up',
      'account.log_in',
      'api_keys.create',
      'api_keys.revoke',
    ]);
    for (const a of audit) expect(a.actor_id).toBe(user.id);
    for (const a of audit.slice(2))
      expect([a.action, a.outcome, a.detail.surface]).toEqual([a.action, 'ok', 'dashboard']);
    expect(JSON.stringify(audit)).not.toContain(secret);
    await ctx.close();
  });

  it('keys for RevenueCat’s SDKs: minted and shown once, listed by hint, answer /revenuecat, revoked → 401; a viewer mints none', async () => {
    const ctx = await h.browser.newContext();
    const p = await ctx.newPage();
    const email = uniqueEmail('rckeys');
    await signUp(p, h.api.dashboardRoot, email);
    const db = testDb();
    const user = await db('dashboard_users').where({ email }).first();

    await p.getByRole('link', { name: 'Developer API' }).click();
    await expect(p.getByText('No keys for RevenueCat’s SDKs yet.').count()).resolves.toBe(1);
    await p.getByLabel('Platform').selectOption('web');
    await p.getByLabel('Mode').selectOption('test');
    await p.getByRole('button', { name: 'Create RevenueCat key' }).click();
    await p.waitForURL(`${h.api.dashboardRoot}/settings/developer-api`);
    const key = await p.getByLabel('Key for RevenueCat’s SDK', { exact: true }).inputValue();
    expect(key).toMatch(/^rcb_sb_/);
    await screenshot(p, 'developer-api-revenuecat-key');

    // The key is what RevenueCat's web SDK is configured with: it reads this tenant's customer info.
    const customerInfo = () =>
      fetch(`${h.api.apiRoot}/revenuecat/v1/subscribers/someone`, { headers: { authorization: `Bearer ${key}` } });
    const ok = await customerInfo();
    expect(ok.status).toBe(200);
    expect((await ok.json()).subscriber.original_app_user_id).toBe('someone');

    // A reload shows it no more; the list has its hint, platform and mode, never the value.
    await p.reload();
    expect(await p.content()).not.toContain(key);
    const row = p.getByRole('row', { name: /rcb_sb_/ });
    await expect(row.textContent()).resolves.toMatch(/Web.*test/);
    await expect(row.textContent()).resolves.toContain(key.slice(-4));

    // A live Android key: goog_, listed beside the first.
    await p.getByLabel('Platform').selectOption('android');
    await p.getByLabel('Mode').selectOption('live');
    await p.getByRole('button', { name: 'Create RevenueCat key' }).click();
    expect(await p.getByLabel('Key for RevenueCat’s SDK', { exact: true }).inputValue()).toMatch(/^goog_/);
    await p.reload();
    await expect(p.getByRole('row', { name: /goog_/ }).textContent()).resolves.toMatch(/Android.*live/);

    await row.getByRole('button', { name: /^Revoke Web test key/ }).click();
    await p.getByText('revoked', { exact: false }).first().waitFor();
    expect((await customerInfo()).status).toBe(401);
    await expect(p.getByRole('row', { name: /rcb_sb_/ }).textContent()).resolves.toContain('Revoked');

    // A viewer's role is the ceiling: they see the keys on a page of their own (hints only, no form, no
    // revoke), the Developer API page is closed to them, and a crafted mint is refused, writing nothing.
    const [viewer] = await db('dashboard_users')
      .insert({ tenant_id: user.tenant_id, email: uniqueEmail('viewer'), role: 'viewer', password_hash: 'unused' })
      .returning(['id', 'tenant_id', 'email', 'role']);
    const session = await createSession(db, viewer);
    const vctx = await h.browser.newContext();
    await vctx.addCookies([{ name: SESSION_COOKIE, value: session.token, url: h.api.dashboardRoot }]);
    const before = await db('revenuecat_keys').where({ tenant_id: user.tenant_id }).count('* as n').first();
    expect((await vctx.request.get(`${h.api.dashboardRoot}/settings/developer-api`)).status()).toBe(403);
    const vp = await vctx.newPage();
    await vp.goto(`${h.api.dashboardRoot}/overview`);
    await vp.getByRole('link', { name: 'RevenueCat keys' }).click();
    await expect(vp.getByRole('row', { name: /goog_/ }).textContent()).resolves.toMatch(
      /Android[\s\S]*live[\s\S]*Active/,
    );
    await expect(vp.getByRole('row', { name: /rcb_sb_/ }).textContent()).resolves.toContain('Revoked');
    expect(await vp.getByRole('button', { name: /Create RevenueCat key|Revoke/ }).count()).toBe(0);
    await expectAccessible(vp, 'revenuecat-keys-viewer');
    const crafted = await vctx.request.post(`${h.api.dashboardRoot}/settings/developer-api/revenuecat-keys`, {
      form: { platform: 'web', mode: 'live' },
    });
    expect(crafted.status()).toBe(403);
    expect(await db('revenuecat_keys').where({ tenant_id: user.tenant_id }).count('* as n').first()).toEqual(before);

    const audit = await db('audit_entries')
      .where({ tenant_id: user.tenant_id, actor_type: 'user' })
      .where('action', 'like', 'revenuecat_keys.%')
      .orderBy('created_at');
    // The writes are the operations' audit rows, the person's, from the dashboard; no key value in them.
    expect(audit.map((a) => `${a.action}:${a.outcome}`)).toEqual([
      'revenuecat_keys.create:ok',
      'revenuecat_keys.create:ok',
      'revenuecat_keys.revoke:ok',
    ]);
    for (const a of audit) expect([a.actor_id, a.detail.surface]).toEqual([user.id, 'dashboard']);
    expect(JSON.stringify(audit)).not.toContain(key);
    await vctx.close();
    await ctx.close();
  });
});
