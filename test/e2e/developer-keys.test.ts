import { describe, expect, it } from 'vitest';
import { testDb } from '../helpers/db';
import { dashboardHarness, screenshot, signUp, uniqueEmail } from './helpers/browser';

describe('dashboard: publishable keys and a secret key shown once (issue #18, items 1–2)', () => {
  const h = dashboardHarness();

  it('after sign-up, Developer API shows the app with its test and live publishable keys and the SDK init call', async () => {
    const ctx = await h.browser.newContext();
    const p = await ctx.newPage();
    const email = uniqueEmail('pk');
    await signUp(p, h.api.dashboardRoot, email);
    const user = await testDb()('dashboard_users').where({ email }).first();
    const app = await testDb()('apps').where({ tenant_id: user.tenant_id }).first();

    await expect(p.getByRole('heading', { name: 'Apps and publishable keys' }).count()).resolves.toBe(1);
    await expect(p.getByLabel('Test publishable key', { exact: true }).inputValue()).resolves.toBe(
      app.publishable_key_test,
    );
    await expect(p.getByLabel('Live publishable key', { exact: true }).inputValue()).resolves.toBe(
      app.publishable_key_live,
    );
    expect(app.publishable_key_test).toMatch(/^pk_test_/);
    const code = await p.locator('pre code', { hasText: 'Billing.configure(' }).textContent();
    expect(code).toContain('Billing.configure(');
    expect(code).toContain(`publishableKey: '${app.publishable_key_test}'`);
    expect(code).toContain(`backend: '${h.api.services.config.publicApiUrl}'`);
    await screenshot(p, 'developer-api-publishable-keys');
    await ctx.close();
  });

  it('creating a key redirects (303) to a page that shows it once; a reload shows it no more and mints nothing', async () => {
    const ctx = await h.browser.newContext();
    const p = await ctx.newPage();
    const email = uniqueEmail('prg');
    await signUp(p, h.api.dashboardRoot, email);
    const user = await testDb()('dashboard_users').where({ email }).first();
    const keyCount = async () => (await testDb()('api_keys').where({ tenant_id: user.tenant_id })).length;

    // A refusal is the operation's, shown as the form's own sentence, the form kept as typed.
    await p.getByLabel('Name').fill('once');
    const [refused] = await Promise.all([
      p.waitForResponse((r) => r.request().method() === 'POST'),
      p.getByRole('button', { name: 'Create key' }).click(),
    ]);
    expect(refused.status()).toBe(400);
    await expect(p.getByRole('alert').textContent()).resolves.toBe('Choose at least one scope.');
    await expect(p.getByLabel('Name').inputValue()).resolves.toBe('once');
    expect(await keyCount()).toBe(0);

    await p.getByLabel('products:read', { exact: true }).check();
    const [post] = await Promise.all([
      p.waitForResponse((r) => r.request().method() === 'POST'),
      p.getByRole('button', { name: 'Create key' }).click(),
    ]);
    expect(post.status()).toBe(303);
    await p.waitForURL(`${h.api.dashboardRoot}/settings/developer-api`);
    const secret = await p.getByLabel('Secret key', { exact: true }).inputValue();
    expect(secret).toMatch(/^sk_/);
    await expect(p.getByRole('status').textContent()).resolves.toContain('Key "once" created.');
    expect(await keyCount()).toBe(1);
    // Nothing readable waits in the database once it has been shown.
    const session = await testDb()('dashboard_sessions').where({ user_id: user.id }).first();
    expect(session.pending_secret).toBeNull();

    // A reload is a GET: no second key, and the secret is gone from the page.
    const reload = await p.reload();
    expect(reload!.request().method()).toBe('GET');
    expect(await keyCount()).toBe(1);
    await expect(p.getByLabel('Secret key', { exact: true }).count()).resolves.toBe(0);
    expect(await p.content()).not.toContain(secret);
    await ctx.close();
  });
});
