import { describe, expect, it } from 'vitest';
import { testDb } from '../helpers/db';
import { MAX_FAILURES } from '../../db/login-attempts';
import { safeNext } from '../../api/dashboard/auth-pages';
import { screenshot, signUp, uniqueEmail, dashboardHarness } from './helpers/browser';

describe('dashboard: sign-up, log in, log out, CSRF and login rate limit', () => {
  const h = dashboardHarness();

  it('logs out (session row deleted) and back in with the same password; a wrong password is refused', async () => {
    const ctx = await h.browser.newContext();
    const p = await ctx.newPage();
    const email = uniqueEmail('login');
    await signUp(p, h.api.dashboardRoot, email, 'a long enough password');
    const user = await testDb()('dashboard_users').where({ email }).first();
    await p.getByRole('button', { name: 'Log out' }).click();
    await p.waitForURL(h.api.dashboardRoot + '/');
    expect(await testDb()('dashboard_sessions').where({ user_id: user.id })).toHaveLength(0);
    // Signed out: a page sends the person to log in, and back there afterwards.
    await p.goto(`${h.api.dashboardRoot}/providers`);
    expect(new URL(p.url()).pathname).toBe('/login');
    await screenshot(p, 'login');

    await p.getByLabel('Email').fill(email);
    await p.getByLabel('Password').fill('not the password');
    await p.getByRole('button', { name: 'Log in' }).click();
    await expect(p.getByRole('alert').textContent()).resolves.toContain('do not match');

    await p.getByLabel('Password').fill('a long enough password');
    await p.getByRole('button', { name: 'Log in' }).click();
    await p.waitForURL('**/providers');
    // Only local paths are followed after login.
    for (const evil of ['//evil.example', 'https://evil.example', '/\\evil.example']) expect(safeNext(evil)).toBe('/settings/developer-api');
    const actions = await testDb()('audit_entries').where({ tenant_id: user.tenant_id, actor_type: 'user', actor_id: user.id }).orderBy('created_at').pluck('action');
    expect(actions).toEqual(['dashboard.sign_up', 'dashboard.log_out', 'dashboard.log_in', 'dashboard.log_in']);
    await ctx.close();
  });

  it('refuses a form post without its CSRF token, and one with another session’s token', async () => {
    const ctx = await h.browser.newContext();
    const p = await ctx.newPage();
    await signUp(p, h.api.dashboardRoot, uniqueEmail('csrf'));
    await p.getByLabel('Name').fill('no token');
    await p.getByLabel('tenant:read', { exact: true }).check();
    await p.evaluate(() => document.querySelectorAll('input[name=_csrf]').forEach((e) => e.remove()));
    const [resp] = await Promise.all([p.waitForResponse((r) => r.request().method() === 'POST'), p.getByRole('button', { name: 'Create key' }).click()]);
    expect(resp.status()).toBe(403);
    await expect(p.getByRole('alert').textContent()).resolves.toContain('security token');
    await screenshot(p, 'csrf-refused');

    // A token from a different browser (another session) does not fit this session.
    const other = await h.browser.newContext();
    const q = await other.newPage();
    await signUp(q, h.api.dashboardRoot, uniqueEmail('csrf-other'));
    const foreign = await q.locator('input[name=_csrf]').first().inputValue();
    await p.goto(`${h.api.dashboardRoot}/settings/developer-api`);
    await p.getByLabel('Name').fill('foreign token');
    await p.getByLabel('tenant:read', { exact: true }).check();
    await p.evaluate((t) => document.querySelectorAll<HTMLInputElement>('input[name=_csrf]').forEach((e) => (e.value = t)), foreign);
    const [resp2] = await Promise.all([p.waitForResponse((r) => r.request().method() === 'POST'), p.getByRole('button', { name: 'Create key' }).click()]);
    expect(resp2.status()).toBe(403);
    expect(await testDb()('api_keys').whereIn('name', ['no token', 'foreign token'])).toHaveLength(0);
    await ctx.close();
    await other.close();
  });

  it('rate-limits failed logins per email, counted in Postgres, even for the right password', async () => {
    const ctx = await h.browser.newContext();
    const p = await ctx.newPage();
    const email = uniqueEmail('limit');
    await signUp(p, h.api.dashboardRoot, email, 'the right password!');
    await ctx.clearCookies();
    const tryLogin = async (password: string) => {
      await p.goto(`${h.api.dashboardRoot}/login`);
      await p.getByLabel('Email').fill(email);
      await p.getByLabel('Password').fill(password);
      const [r] = await Promise.all([p.waitForResponse((x) => x.request().method() === 'POST'), p.getByRole('button', { name: 'Log in' }).click()]);
      return r.status();
    };
    for (let i = 0; i < MAX_FAILURES.email; i++) expect(await tryLogin('wrong')).toBe(401);
    expect(await tryLogin('the right password!')).toBe(429);
    await expect(p.getByRole('alert').textContent()).resolves.toContain('Too many failed attempts');
    const rows = await testDb()('dashboard_login_attempts').where('key', 'like', 'email:%').where('failures', '>=', MAX_FAILURES.email);
    expect(rows.length).toBeGreaterThanOrEqual(1);
    expect(JSON.stringify(rows)).not.toContain(email);
    await ctx.close();
  });

  it('cookies are Secure when the request came over TLS (X-Forwarded-Proto behind a proxy), HttpOnly and SameSite=Lax always', async () => {
    const overTls = await fetch(`${h.api.dashboardRoot}/signup`, { headers: { 'x-forwarded-proto': 'https' } });
    const tlsCookie = overTls.headers.get('set-cookie') ?? '';
    expect(tlsCookie).toMatch(/dash_anon=/);
    expect(tlsCookie.toLowerCase()).toContain('; secure');
    const plain = (await fetch(`${h.api.dashboardRoot}/signup`)).headers.get('set-cookie') ?? '';
    expect(plain.toLowerCase()).not.toContain('secure');
    for (const c of [tlsCookie, plain]) expect(c.toLowerCase()).toMatch(/httponly.*samesite=lax|samesite=lax.*httponly/);
  });

  it('rejects a taken email with a clear message and writes nothing', async () => {
    const ctx = await h.browser.newContext();
    const p = await ctx.newPage();
    const email = uniqueEmail('dup');
    await signUp(p, h.api.dashboardRoot, email);
    await ctx.clearCookies();
    await p.goto(`${h.api.dashboardRoot}/signup`);
    await p.getByLabel('Email').fill(email);
    await p.getByLabel('Password').fill('another long password');
    await p.getByRole('button', { name: 'Sign up' }).click();
    await expect(p.getByRole('alert').textContent()).resolves.toContain('already exists');
    expect(await testDb()('dashboard_users').where({ email })).toHaveLength(1);
    await ctx.close();
  });
});
