import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { upsertAttributes } from '../../db/revenuecat';
import { withTenant } from '../../db/tenant-tx';
import { testDb } from '../helpers/db';
import { startApi } from '../helpers/api';
import { makeEntitlement, makeProduct, makeTenant } from '../helpers/factories';
import { startTestWorker } from '../helpers/temporal';
import { expectAccessible, launchBrowser, screenshot, signUp, uniqueEmail } from './helpers/browser';

/**
 * The support desk in the dashboard (docs/support.md): a list links an app user to their page,
 * the search box finds them, the page shows their access with why and their timeline, a person
 * grants and revokes access (audited under their name), every page axe-clean; another tenant's
 * app user is not found.
 */
describe('dashboard: the customer page, grants and revocations', () => {
  let w: Awaited<ReturnType<typeof startTestWorker>>;
  let api: Awaited<ReturnType<typeof startApi>>;
  let browser: Browser;
  beforeAll(async () => {
    w = await startTestWorker();
    api = await startApi({ config: w.config, vault: w.vault });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await api?.close();
    await w?.stop();
  });

  it('from the subscribers list to the page, grant, revoke; the audit names the person; another tenant’s customer is 404', async () => {
    const ctx = await browser.newContext();
    const p = await ctx.newPage();
    const email = uniqueEmail('support-desk');
    await signUp(p, api.dashboardRoot, email);
    const person = await testDb()('dashboard_users').where({ email }).first();
    const tenantId = person.tenant_id as string;
    const product = await makeProduct(tenantId, { sku: 'pro_annual' });
    await makeEntitlement(tenantId, {
      appUserId: 'cust_42',
      provider: 'store_android',
      productId: product.id,
      state: 'revoked',
      subscription: { status: 'refunded' },
    });
    const other = await makeTenant('support-desk-other');
    await makeEntitlement(other.tenant_id, { appUserId: 'elsewhere_7' });

    // A list that shows app user ids links each to their page.
    await p.goto(`${api.dashboardRoot}/subscribers`);
    await p.getByRole('link', { name: 'cust_42' }).first().click();
    await p.waitForURL('**/customers/cust_42');
    expect(await p.locator('h1').textContent()).toBe('Customer cust_42');
    expect(await p.locator('#premium-answer').textContent()).toContain('Not premium');
    expect(await p.locator('main').textContent()).toContain('The store reported a refund');
    await expectAccessible(p, 'customer page');
    await screenshot(p, 'customer');

    // The search box, by app user id.
    await p.goto(`${api.dashboardRoot}/customers`);
    await expectAccessible(p, 'customer search');
    await p.getByLabel('App user id or email').fill('cust_42');
    await p.getByRole('button', { name: 'Find' }).click();
    await p.waitForURL('**/customers/cust_42');

    // By email: a web provider's purchase carries the buyer's address; the store factory's record has none, so it is
    // set here.
    await testDb()('subscriptions')
      .where({ tenant_id: tenantId, app_user_id: 'cust_42' })
      .update({ email: 'cust42@example.test' });
    await p.goto(`${api.dashboardRoot}/customers`);
    await p.getByLabel('App user id or email').fill('cust42@example.test');
    await p.getByRole('button', { name: 'Find' }).click();
    await p.waitForURL('**/customers/cust_42');

    // Grant by hand.
    await p.getByLabel('Product').selectOption('pro_annual');
    await p.getByLabel('Days').fill('10');
    await p.getByLabel('Reason').fill('goodwill after the refund mix-up');
    await p.getByRole('button', { name: 'Grant', exact: true }).click();
    await p.getByText('Access granted.').waitFor();
    expect(await p.locator('#premium-answer').textContent()).toContain('Premium: the SDK answers yes');
    const main = await p.locator('main').textContent();
    expect(main).toContain('pro_annual: active (granted)');
    expect(main).toContain(`Granted by user:${person.id}`);
    expect(main).toMatch(/granted until .* goodwill after the refund mix-up/);
    await expectAccessible(p, 'customer page with a grant');
    await screenshot(p, 'customer-granted');

    // The overview counts it apart from paid access, and links to it.
    await p.goto(`${api.dashboardRoot}/overview`);
    expect(await p.locator('#granted-figure').textContent()).toBe('1');
    await p.getByRole('link', { name: /Granted by hand/ }).click();
    expect(await p.locator('main table').textContent()).toContain('grant');
    await p.getByRole('link', { name: 'cust_42' }).first().click();
    await p.waitForURL('**/customers/cust_42');

    // Revoke it.
    await p.getByRole('button', { name: 'Revoke grant of pro_annual' }).click();
    await p.getByText('Grant revoked.').waitFor();
    expect(await p.locator('#premium-answer').textContent()).toContain('Not premium');
    expect(await p.locator('main').textContent()).toContain('grant revoked by');
    await expectAccessible(p, 'customer page after revoking');

    const audit = await testDb()('audit_entries')
      .where({ tenant_id: tenantId })
      .whereIn('action', ['grants.create', 'grants.revoke'])
      .orderBy('created_at');
    expect(audit.map((a) => [a.action, a.actor_type, a.actor_id, a.outcome, a.detail?.surface])).toEqual([
      ['grants.create', 'user', person.id, 'ok', 'dashboard'],
      ['grants.revoke', 'user', person.id, 'ok', 'dashboard'],
    ]);

    // Another tenant's app user, and nobody at all: not found, and the page is still accessible.
    for (const u of ['elsewhere_7', 'nobody_at_all']) {
      const r = await p.goto(`${api.dashboardRoot}/customers/${u}`);
      expect(r?.status()).toBe(404);
      expect(await p.getByRole('alert').textContent()).toContain(`No customer ${u}`);
    }
    await expectAccessible(p, 'customer not found');
    await ctx.close();
  }, 120_000);

  it('erasing personal data asks for the app user id typed out, then removes the attributes; billing stays', async () => {
    const ctx = await browser.newContext();
    const p = await ctx.newPage();
    const email = uniqueEmail('support-erase');
    await signUp(p, api.dashboardRoot, email);
    const { tenant_id: tenantId } = await testDb()('dashboard_users').where({ email }).first();
    await makeEntitlement(tenantId, { appUserId: 'cust_erase' });
    await withTenant(testDb(), tenantId, (trx) =>
      upsertAttributes(
        trx,
        tenantId,
        'cust_erase',
        [{ name: '$email', value: 'erase-me@example.test', setAtMs: 1 }],
        100,
      ),
    );
    await p.goto(`${api.dashboardRoot}/customers/cust_erase`);
    expect(await p.locator('main').textContent()).toContain('erase-me@example.test');

    // A confirmation that does not match erases nothing.
    await p.getByLabel('Type the app user id to confirm').fill('cust_eras');
    await p.getByRole('button', { name: 'Erase personal data' }).click();
    await p.getByRole('alert').waitFor();
    expect(await p.getByRole('alert').textContent()).toContain('nothing was erased');
    expect(await testDb()('subscriber_attributes').where({ tenant_id: tenantId })).toHaveLength(1);

    await p.getByLabel('Type the app user id to confirm').fill('cust_erase');
    await p.getByRole('button', { name: 'Erase personal data' }).click();
    await p.getByText('Personal data erased;').waitFor();
    // The page is the pseudonym's now: neither the email nor the id is shown.
    expect(await p.locator('main').textContent()).not.toContain('erase-me@example.test');
    expect(await p.locator('main').textContent()).not.toContain('cust_erase');
    expect(await p.locator('main').textContent()).toMatch(/erased_[0-9a-f]{32}/);
    expect(await p.locator('#premium-answer').textContent()).toContain('Premium: the SDK answers yes');
    expect(await testDb()('subscriber_attributes').where({ tenant_id: tenantId })).toEqual([]);
    await expectAccessible(p, 'customer page after erasing');
    await ctx.close();
  }, 120_000);
});
