import { describe, expect, it } from 'vitest';
import { testDb } from '../helpers/db';
import { screenshot, signUp, uniqueEmail, dashboardHarness } from './helpers/browser';

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
});
