import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { keyWith, newTenant } from '../helpers/api';
import { testDb } from '../helpers/db';
import { expectAccessible, screenshot, signUp, uniqueEmail, dashboardHarness } from './helpers/browser';

describe('dashboard: browsing entitlements, deliveries and sync runs with the API’s filters', () => {
  const h = dashboardHarness();

  it('filters entitlements like GET /v1/entitlements, shows only the tenant’s own rows, sync runs by workflow id with no link to the Temporal UI', async () => {
    const ctx = await h.browser.newContext();
    const p = await ctx.newPage();
    const email = uniqueEmail('browse');
    await signUp(p, h.api.dashboardRoot, email);
    const db = testDb();
    const { tenant_id } = await db('dashboard_users').where({ email }).first();
    const other = await newTenant('browse-other');
    await db('entitlements').insert([
      { tenant_id, app_user_id: 'user_active', provider: 'psp_a', state: 'active' },
      { tenant_id, app_user_id: 'user_expired', provider: 'psp_b', state: 'expired' },
      { tenant_id: other.tenant_id, app_user_id: 'user_of_another_tenant', provider: 'psp_a', state: 'active' },
    ]);
    const newRunId = crypto.randomUUID();
    await db('sync_runs').insert({
      id: newRunId,
      tenant_id,
      status: 'succeeded',
      requested_by: 'test',
      workflow_id: `sync-${tenant_id}-${newRunId}`,
    });

    await p.getByRole('link', { name: 'Entitlements' }).click();
    const text = () => p.locator('main').textContent();
    await expect(text()).resolves.toContain('user_active');
    await expect(text()).resolves.toContain('user_expired');
    await expect(text()).resolves.not.toContain('user_of_another_tenant');
    await p.getByLabel('state').selectOption('expired');
    await p.getByRole('button', { name: 'Filter' }).click();
    await p.waitForURL(/state=expired/);
    await expect(text()).resolves.toContain('user_expired');
    await expect(text()).resolves.not.toContain('user_active');
    await expectAccessible(p, 'entitlements');
    await screenshot(p, 'entitlements');

    // A filter value the API refuses is the API's own 400 message, not a crash.
    const bad = await p.goto(`${h.api.dashboardRoot}/entitlements?state=bogus`);
    expect(bad!.status()).toBe(400);
    await expect(p.getByRole('alert').textContent()).resolves.toContain('state');

    for (const path of ['/subscribers', '/webhook-deliveries', '/audit']) {
      expect((await p.goto(h.api.dashboardRoot + path))!.status()).toBe(200);
      await expectAccessible(p, path);
      await screenshot(p, path.slice(1));
    }

    await p.getByRole('link', { name: 'Sync runs' }).click();
    // Each run's recorded workflow id as text; no link to the Temporal UI (the operator's,
    // showing every tenant's workflows).
    await expect(p.getByRole('cell', { name: `sync-${tenant_id}-${newRunId}`, exact: true }).count()).resolves.toBe(1);
    await expect(p.locator('main a[href*="/namespaces/"], main a[href*=":8233"]').count()).resolves.toBe(0);
    expect(await p.content()).not.toContain('Temporal UI');
    await expectAccessible(p, 'sync runs');
    await screenshot(p, 'sync-runs');
    await ctx.close();
  });

  it('readiness shows the same rows as GET /v1/readiness, with store manual steps as a checklist', async () => {
    const ctx = await h.browser.newContext();
    const p = await ctx.newPage();
    const email = uniqueEmail('readiness');
    await signUp(p, h.api.dashboardRoot, email);
    const { tenant_id } = await testDb()('dashboard_users').where({ email }).first();
    // A connected store is what makes its manual steps appear.
    await testDb()('provider_connections').insert({
      tenant_id,
      provider: 'store_ios',
      account_ref: 'com.example.app',
      is_default: true,
    });
    const key = await keyWith(tenant_id, ['readiness:read']);
    const viaApi = await (
      await fetch(`${h.api.apiUrl}/readiness`, { headers: { authorization: `Bearer ${key.secret_key}` } })
    ).json();
    await p.getByRole('link', { name: 'Readiness' }).click();
    const rows = p.getByRole('row');
    expect(await rows.count()).toBe(viaApi.providers.length + 1);
    for (const row of viaApi.providers) {
      const text = await p.getByRole('row', { name: new RegExp(`^${row.provider}\\b`) }).textContent();
      expect(text).toContain(row.test_detail);
      expect(text).toContain(row.live_detail);
    }
    const withSteps = viaApi.providers.filter((r: { manual_steps: string[] | null }) => r.manual_steps?.length);
    expect(withSteps.length).toBeGreaterThan(0);
    for (const row of withSteps) {
      for (const step of row.manual_steps)
        await expect(p.getByRole('checkbox', { name: step }).count()).resolves.toBe(1);
    }
    await expectAccessible(p, 'readiness');
    await screenshot(p, 'readiness');
    await ctx.close();
  });
});
