import { describe, expect, it } from 'vitest';
import { testDb } from '../helpers/db';
import { DEFAULT_LIMITS } from '../../domain/login-limits';
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
    for (const evil of ['//evil.example', 'https://evil.example', '/\\evil.example'])
      expect(safeNext(evil)).toBe('/overview');
    const actions = await testDb()('audit_entries')
      .where({ tenant_id: user.tenant_id, actor_type: 'user', actor_id: user.id })
      .orderBy('created_at')
      .pluck('action');
    expect(actions).toEqual([
      'account.sign_up',
      'account.log_in',
      'account.log_out',
      'account.log_in',
      'account.log_in',
    ]);
    await ctx.close();
  });

  it('refuses a form post without its CSRF token, and one with another session’s token', async () => {
    const ctx = await h.browser.newContext();
    const p = await ctx.newPage();
    await signUp(p, h.api.dashboardRoot, uniqueEmail('csrf'));
    await p.getByLabel('Name').fill('no token');
    await p.getByLabel('tenant:read', { exact: true }).check();
    await p.evaluate(() => document.querySelectorAll('input[name=_csrf]').forEach((e) => e.remove()));
    const [resp] = await Promise.all([
      p.waitForResponse((r) => r.request().method() === 'POST'),
      p.getByRole('button', { name: 'Create key' }).click(),
    ]);
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
    await p.evaluate(
      (t) => document.querySelectorAll<HTMLInputElement>('input[name=_csrf]').forEach((e) => (e.value = t)),
      foreign,
    );
    const [resp2] = await Promise.all([
      p.waitForResponse((r) => r.request().method() === 'POST'),
      p.getByRole('button', { name: 'Create key' }).click(),
    ]);
    expect(resp2.status()).toBe(403);
    expect(await testDb()('api_keys').whereIn('name', ['no token', 'foreign token'])).toHaveLength(0);
    await ctx.close();
    await other.close();
  });

  it('rate-limits failed logins per account and address, counted in Postgres, even for the right password', async () => {
    const ctx = await h.browser.newContext();
    const p = await ctx.newPage();
    const email = uniqueEmail('limit');
    await signUp(p, h.api.dashboardRoot, email, 'the right password!');
    await ctx.clearCookies();
    const tryLogin = async (password: string) => {
      await p.goto(`${h.api.dashboardRoot}/login`);
      await p.getByLabel('Email').fill(email);
      await p.getByLabel('Password').fill(password);
      const [r] = await Promise.all([
        p.waitForResponse((x) => x.request().method() === 'POST'),
        p.getByRole('button', { name: 'Log in' }).click(),
      ]);
      return r.status();
    };
    for (let i = 0; i < DEFAULT_LIMITS.pair.max; i++) expect(await tryLogin('wrong')).toBe(401);
    expect(await tryLogin('the right password!')).toBe(429);
    await expect(p.getByRole('alert').textContent()).resolves.toContain('Too many failed attempts');
    const rows = await testDb()('dashboard_login_attempts')
      .where('key', 'like', 'pair:%')
      .where('failures', '>=', DEFAULT_LIMITS.pair.max);
    expect(rows.length).toBeGreaterThanOrEqual(1);
    expect(JSON.stringify(rows)).not.toContain(email);
    await ctx.close();
  });

  it('cookies are HttpOnly and SameSite=Lax; X-Forwarded-Proto from a peer that is not a trusted proxy does not make them Secure', async () => {
    // The Secure case behind a configured proxy: test/e2e/login-limits.test.ts.
    const spoofed =
      (await fetch(`${h.api.dashboardRoot}/signup`, { headers: { 'x-forwarded-proto': 'https' } })).headers.get(
        'set-cookie',
      ) ?? '';
    expect(spoofed).toMatch(/dash_anon=/);
    expect(spoofed.toLowerCase()).not.toContain('; secure');
    const plain = (await fetch(`${h.api.dashboardRoot}/signup`)).headers.get('set-cookie') ?? '';
    expect(plain.toLowerCase()).not.toContain('secure');
    for (const c of [spoofed, plain]) expect(c.toLowerCase()).toMatch(/httponly.*samesite=lax|samesite=lax.*httponly/);
  });

  it('answers a taken email exactly as a new one (the login page and its notice) and writes nothing', async () => {
    const ctx = await h.browser.newContext();
    const p = await ctx.newPage();
    const email = uniqueEmail('dup');
    await signUp(p, h.api.dashboardRoot, email);
    await ctx.clearCookies();
    const submit = async (address: string) => {
      await p.goto(`${h.api.dashboardRoot}/signup`);
      await p.getByLabel('Email').fill(address);
      await p.getByLabel('Password').fill('another long password');
      const [r] = await Promise.all([
        p.waitForResponse((x) => x.request().method() === 'POST'),
        p.getByRole('button', { name: 'Sign up' }).click(),
      ]);
      await p.waitForURL('**/login?signed_up=1');
      return {
        status: r.status(),
        location: r.headers().location,
        notice: await p.getByRole('status').textContent(),
        signedIn: (await ctx.cookies()).some((c) => c.name === 'dash_session'),
      };
    };
    const taken = await submit(email);
    const fresh = await submit(uniqueEmail('fresh'));
    expect(taken).toEqual(fresh);
    expect(taken).toMatchObject({ status: 303, signedIn: false });
    expect(taken.notice).not.toContain('already exists');
    const user = await testDb()('dashboard_users').where({ email }).first();
    expect(await testDb()('dashboard_users').where({ email })).toHaveLength(1);
    expect(await testDb()('tenants').where({ name: email })).toHaveLength(1);
    // The taken account's password is unchanged: it still logs in with the first one.
    await p.getByLabel('Email').fill(email);
    await p.getByLabel('Password').fill('another long password');
    await p.getByRole('button', { name: 'Log in' }).click();
    await expect(p.getByRole('alert').textContent()).resolves.toContain('do not match');
    expect((await testDb()('dashboard_users').where({ id: user.id }).first()).password_hash).toBe(user.password_hash);
    await ctx.close();
  });
});
