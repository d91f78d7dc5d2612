import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { testDb } from '../helpers/db';
import { startApi } from '../helpers/api';
import { makeEntitlement, makeProduct } from '../helpers/factories';
import { startTestWorker } from '../helpers/temporal';
import { expectAccessible, launchBrowser, screenshot, signUp, uniqueEmail } from './helpers/browser';

/**
 * Transfers in the dashboard (docs/transfers.md): Settings → Transfers sets the restore policy;
 * the customer page lists a restore waiting for review with Approve and Reject, and a completed
 * one with Undo inside its window; each button runs the operation as the signed-in person
 * (audited under their name), and both customers' pages say what happened.
 */
describe('dashboard: transfer settings and the customer page’s transfer buttons', () => {
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

  it('sets the policy, approves a pending transfer, undoes it; the audit names the person', async () => {
    const ctx = await browser.newContext();
    const p = await ctx.newPage();
    const email = uniqueEmail('transfers');
    await signUp(p, api.dashboardRoot, email);
    const person = await testDb()('dashboard_users').where({ email }).first();
    const tenantId = person.tenant_id as string;

    await p.goto(`${api.dashboardRoot}/settings/transfers`);
    await expectAccessible(p, 'transfer settings');
    await p.getByLabel('When a restore finds the purchase with another app user').selectOption('review');
    await p.getByLabel(/Hours a transfer can be undone/).fill('48');
    await p.getByRole('button', { name: 'Save' }).click();
    await p.getByText('Saved.').waitFor();
    expect(await testDb()('transfer_settings').where({ tenant_id: tenantId }).first()).toMatchObject({
      restore_behavior: 'review',
    });
    // A restore under review, as the store registration leaves it: the holder's purchase, a pending transfer.
    const product = await makeProduct(tenantId, { sku: 'premium_monthly' });
    const ent = await makeEntitlement(tenantId, { appUserId: 'holder_1', productId: product.id });
    const sub = await testDb()('subscriptions').where({ id: ent.subscription_id }).first();
    await testDb()('store_purchase_tokens').insert({
      tenant_id: tenantId,
      provider: 'store_android',
      token_hash: sub.external_id,
      app_user_id: 'holder_1',
      subscription_id: sub.id,
      entitlement_id: ent.id,
    });
    const [t] = await testDb()('transfers')
      .insert({
        tenant_id: tenantId,
        status: 'pending',
        policy: 'review',
        provider: 'store_android',
        token_hash: sub.external_id,
        purchase_key: sub.external_id,
        from_app_user_id: 'holder_1',
        to_app_user_id: 'restorer_1',
        is_sandbox: true,
      })
      .returning('id');

    await p.goto(`${api.dashboardRoot}/customers/holder_1`);
    expect(await p.locator(`#transfer-${t.id}`).textContent()).toContain('asked to move from holder_1 to restorer_1');
    await expectAccessible(p, 'customer page with a pending transfer');
    await screenshot(p, 'customer-transfer-pending');
    await p.getByRole('button', { name: 'approve transfer from holder_1 to restorer_1' }).click();
    await p.getByText('Transfer completed.').waitFor();
    expect(await p.locator('#premium-answer').textContent()).toContain('Not premium');

    await p.goto(`${api.dashboardRoot}/customers/restorer_1`);
    expect(await p.locator('#premium-answer').textContent()).toContain('Premium: the SDK answers yes');
    expect(await p.locator('main').textContent()).toContain('Premium since the transfer from holder_1');
    await expectAccessible(p, 'customer page after a transfer');
    await screenshot(p, 'customer-transferred');
    await p.getByRole('button', { name: 'undo transfer from holder_1 to restorer_1' }).click();
    await p.getByText('Transfer undone.').waitFor();
    expect(await p.locator('#premium-answer').textContent()).toContain('Not premium');
    await p.goto(`${api.dashboardRoot}/customers/holder_1`);
    expect(await p.locator('#premium-answer').textContent()).toContain('Premium: the SDK answers yes');
    expect(await p.locator(`#transfer-${t.id}`).textContent()).toContain('undone');
    expect(await p.getByRole('button', { name: /transfer from holder_1/ }).count()).toBe(0);

    const audit = await testDb()('audit_entries')
      .where({ tenant_id: tenantId })
      .whereIn('action', ['transfer_settings.update', 'transfers.approve', 'transfers.undo'])
      .orderBy('created_at');
    expect(audit.map((a) => [a.action, a.actor_id, a.outcome])).toEqual([
      ['transfer_settings.update', person.id, 'ok'],
      ['transfers.approve', person.id, 'ok'],
      ['transfers.undo', person.id, 'ok'],
    ]);
    await ctx.close();
  });
});
