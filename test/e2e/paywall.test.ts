import { describe, expect, it } from 'vitest';
import { keyWith } from '../helpers/api';
import { testDb } from '../helpers/db';
import { expectAccessible, screenshot, signUp, uniqueEmail, dashboardHarness } from './helpers/browser';

describe('dashboard: paywall edit and publish', () => {
  const h = dashboardHarness();

  it('a saved draft is not served; after Publish GET /v1/paywall serves it in the chosen order with its labels', async () => {
    const ctx = await h.browser.newContext();
    const p = await ctx.newPage();
    const email = uniqueEmail('paywall');
    await signUp(p, h.api.dashboardRoot, email);
    const { tenant_id, id: userId } = await testDb()('dashboard_users').where({ email }).first();
    await testDb()('products').insert([
      { tenant_id, sku: 'premium_monthly', name: 'Monthly' },
      { tenant_id, sku: 'premium_annual', name: 'Annual' },
    ]);
    const key = await keyWith(tenant_id, ['paywall:read']);
    const getPaywall = async () => {
      const r = await fetch(`${h.api.apiUrl}/paywall`, { headers: { authorization: `Bearer ${key.secret_key}` } });
      return { status: r.status, body: await r.json() };
    };

    await p.getByRole('link', { name: 'Paywall' }).click();
    await p.getByLabel('Title', { exact: true }).fill('Go Premium');
    await p.getByLabel('Products, in order').fill('premium_annual | Best value\npremium_monthly');
    await p.getByLabel('Default product (optional)').fill('premium_annual');
    await p.getByRole('button', { name: 'Save draft' }).click();
    await expect(p.getByRole('status').textContent()).resolves.toContain('Draft saved');
    expect((await getPaywall()).status).toBe(404);
    await expectAccessible(p, 'paywall');
    await screenshot(p, 'paywall');

    await p.getByRole('button', { name: 'Publish' }).click();
    await expect(p.getByRole('status').textContent()).resolves.toContain('Published');
    const served = await getPaywall();
    expect(served.status).toBe(200);
    expect(served.body).toMatchObject({ published: true, has_unpublished_changes: false });
    expect(served.body.config).toMatchObject({
      title: 'Go Premium',
      skus: ['premium_annual', 'premium_monthly'],
      labels: { premium_annual: 'Best value' },
      default_sku: 'premium_annual',
    });

    // An edit after publishing is a draft again: the SDK keeps getting the published version.
    await p.getByLabel('Title', { exact: true }).fill('Go Premium today');
    await p.getByRole('button', { name: 'Save draft' }).click();
    const after = await getPaywall();
    expect(after.body.config.title).toBe('Go Premium');
    expect(after.body.has_unpublished_changes).toBe(true);

    // A product not in the catalogue is refused by name; nothing changes.
    await p.getByLabel('Products, in order').fill('premium_annual\nno_such_sku');
    await p.getByRole('button', { name: 'Save draft' }).click();
    await expect(p.getByRole('alert').textContent()).resolves.toContain('no_such_sku');
    const row = await testDb()('paywalls').where({ tenant_id }).first();
    expect(row.config.skus).toEqual(['premium_annual', 'premium_monthly']);
    // The operation's rules answer in the form's own words.
    await p.getByLabel('Products, in order').fill('premium_annual');
    await p.getByLabel('Default product (optional)').fill('premium_monthly');
    await p.getByRole('button', { name: 'Save draft' }).click();
    await expect(p.getByRole('alert').textContent()).resolves.toBe(
      'The default product must be one of the listed products.',
    );

    // Each write is its operation's audit row, the person's, from the dashboard; the refusal too.
    const audit = await testDb()('audit_entries')
      .where({ tenant_id, actor_type: 'user', actor_id: userId })
      .where('action', 'like', 'paywall.%')
      .orderBy('created_at');
    expect(audit.map((a) => [a.action, a.outcome, a.detail.surface])).toEqual([
      ['paywall.save_draft', 'ok', 'dashboard'],
      ['paywall.publish', 'ok', 'dashboard'],
      ['paywall.save_draft', 'ok', 'dashboard'],
      ['paywall.save_draft', 'unknown_product', 'dashboard'],
      ['paywall.save_draft', 'invalid_request', 'dashboard'],
    ]);
    await ctx.close();
  });
});
