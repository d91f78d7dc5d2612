import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { attachToApp } from '../../db/app-providers';
import { withTenant } from '../../db/tenant-tx';
import { SCOPES } from '../../domain/scopes';
import { createEmulatorAccount } from '../../seed/demo-providers';
import { call, keyWith, newTenant } from '../helpers/api';
import { createProvenConnection, sellOnWebProvider } from '../helpers/connections';
import { testDb } from '../helpers/db';
import { controlFor } from '../helpers/emulator-control';
import { until } from '../helpers/until';
import { launchBrowser, signUp, uniqueEmail } from '../e2e/helpers/browser';
import { createEndpoint, startOutboundStack } from './fixtures';

/**
 * `readiness.changed` told by the write that changes readiness, in its own transaction, not at
 * the next sync run: a connection edited in the dashboard, a product changed, a store's first
 * sandbox purchase. A
 * write that leaves every verdict as it was tells nothing. Whether an event was recorded is read
 * from the database once the write has answered (it commits with the write); deliveries are
 * awaited and verified with the endpoint's secret.
 */
describe('outbound webhooks: readiness.changed from the write that changes readiness', () => {
  let s: Awaited<ReturnType<typeof startOutboundStack>>;
  let browser: Browser;
  beforeAll(async () => {
    s = await startOutboundStack();
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  const recorded = (tenantId: string) =>
    testDb()('outbound_events')
      .where({ tenant_id: tenantId, type: 'readiness.changed' })
      .orderBy('created_at')
      .pluck('id');
  /** The tenant's readiness.changed deliveries that reached the receiver, verified, in the order recorded. */
  const delivered = async (tenantId: string, secret: string, n: number) => {
    const ids: string[] = await recorded(tenantId);
    const got = await until(
      `${n} readiness.changed delivered`,
      async () => ids.filter((id) => s.rx.received.some((r) => r.headers['webhook-id'] === id)),
      (d) => d.length >= n,
      30_000,
    );
    return got.map((id) =>
      s.rx.verify(
        s.rx.received.find((r) => r.headers['webhook-id'] === id)!,
        secret,
      ),
    );
  };
  const verdicts = (side: any, provider: string) => side.providers.find((p: any) => p.provider === provider) ?? null;

  it('a connection made default, given a test credential, then the product renamed, in the dashboard: each flip of psp_a is told; adding a connection that changes nothing is not', async () => {
    const ctx = await browser.newContext();
    const p = await ctx.newPage();
    const email = uniqueEmail('readiness-writes');
    await signUp(p, s.api.dashboardRoot, email);
    const tenantId: string = (await testDb()('dashboard_users').where({ email }).first()).tenant_id;
    const key = (await keyWith(tenantId, [...SCOPES])).secret_key;
    const ep = await createEndpoint(s.api.apiUrl, key, { url: s.rx.url, event_types: ['readiness.changed'] });
    // psp_a test-ready through a real sync run (told at its end: the first event).
    const { productId } = await sellOnWebProvider({
      emulatorUrl: s.emulators.psp_a.url,
      vault: s.worker.vault,
      apiUrl: s.api.apiUrl,
      tenant: { tenant_id: tenantId, secret_key: key },
    });
    const [fromSync] = await delivered(tenantId, ep.secret, 1);
    expect(verdicts(fromSync.data.current, 'psp_a')).toMatchObject({ test_ready: true });

    // A second psp_a connection, not the default: psp_a still speaks through the first, nothing changed.
    await p.goto(`${s.api.dashboardRoot}/providers`);
    await p.getByLabel('Provider', { exact: true }).selectOption('psp_a');
    await p.getByLabel('Account ID', { exact: true }).fill(`acct_second_${Date.now()}`);
    await p.getByRole('button', { name: 'Add connection' }).click();
    await p.waitForURL(/\/providers\/[0-9a-f-]{36}$/);
    expect(await recorded(tenantId)).toHaveLength(1);

    // Made the default, it speaks for psp_a without a credential: psp_a is no longer test-ready.
    await p.getByRole('button', { name: 'Make default' }).click();
    await expect(p.getByRole('status').textContent()).resolves.toContain('now the default');
    expect(await recorded(tenantId)).toHaveLength(2);
    const [, madeDefault] = await delivered(tenantId, ep.secret, 2);
    expect(madeDefault.type).toBe('readiness.changed');
    expect(verdicts(madeDefault.data.previous, 'psp_a')).toMatchObject({ test_ready: true });
    expect(verdicts(madeDefault.data.current, 'psp_a')).toMatchObject({ test_ready: false, live_ready: false });
    expect(madeDefault.data.current.summary).toMatchObject({ total: 1, test_ready: 0 });

    // Its test credential entered: test-ready again (the product is synced there already).
    await p.getByLabel('Test Secret key', { exact: true }).fill('sk_test_entered_in_the_dashboard');
    await p.getByRole('button', { name: 'Save secrets' }).click();
    await expect(p.getByRole('status').textContent()).resolves.toContain('Saved');
    const [, , credentialed] = await delivered(tenantId, ep.secret, 3);
    expect(verdicts(credentialed.data.previous, 'psp_a')).toMatchObject({ test_ready: false });
    expect(verdicts(credentialed.data.current, 'psp_a')).toMatchObject({ test_ready: true });

    // The product renamed: its new version is not at psp_a yet, so psp_a is not test-ready until the next sync.
    await p.goto(`${s.api.dashboardRoot}/products/${productId}`);
    await p.getByLabel('Name', { exact: true }).fill('Pro, renamed');
    await p.getByRole('button', { name: 'Save product' }).click();
    await expect(p.getByRole('status').textContent()).resolves.toContain('Saved');
    expect(await recorded(tenantId)).toHaveLength(4);
    const [, , , renamed] = await delivered(tenantId, ep.secret, 4);
    expect(verdicts(renamed.data.previous, 'psp_a')).toMatchObject({ test_ready: true });
    expect(verdicts(renamed.data.current, 'psp_a')).toMatchObject({ test_ready: false });
    await ctx.close();
  });

  it("a store's first sandbox purchase makes it test-ready and is told; a second sandbox purchase is not", async () => {
    const t = await newTenant('readiness-sandbox');
    const android = await createEmulatorAccount(s.emulators.store_android.url);
    await withTenant(testDb(), t.tenant_id, async (trx) => {
      await createProvenConnection(trx, s.worker.vault, {
        provider: 'store_android',
        account_ref: android.account,
        credentials: android.credentials,
        webhook_secret: android.webhook_secret,
      });
      await attachToApp(trx, t.app_id, 'store_android');
      await trx('products').insert({
        tenant_id: t.tenant_id,
        sku: 'premium_monthly',
        name: 'Premium',
        tier: 'monthly',
        android_store_product_id: 'premium_monthly',
      });
    });
    const ep = await createEndpoint(s.api.apiUrl, t.secret_key, { url: s.rx.url, event_types: ['readiness.changed'] });
    const pk: string = (await testDb()('apps').where({ id: t.app_id }).first('publishable_key_test'))
      .publishable_key_test;
    const control = controlFor(() => s.emulators.store_android.url, { strict: true });
    const buy = async (user: string) => {
      const { purchase_token } = await control<{ purchase_token: string }>('POST', '/sandbox-purchase', {
        product_id: 'premium_monthly',
        account: android.account,
        app_user_id: user,
      });
      const r = await call(s.api.apiRoot, '/v1/sdk/store-purchases', pk, {
        method: 'POST',
        body: JSON.stringify({
          app_user_id: user,
          provider: 'store_android',
          product_id: 'premium_monthly',
          purchase_token,
        }),
      });
      expect(r.body).toMatchObject({ is_premium: true });
    };

    await buy('sandbox_first');
    expect(await recorded(t.tenant_id)).toHaveLength(1);
    const [told] = await delivered(t.tenant_id, ep.secret, 1);
    expect(verdicts(told.data.previous, 'store_android')).toMatchObject({ test_ready: false });
    expect(verdicts(told.data.current, 'store_android')).toMatchObject({ test_ready: true });
    expect(told.data.current.summary.test_ready).toBe(told.data.previous.summary.test_ready + 1);

    // Another sandbox entitlement made: the evidence was there already, nothing to tell.
    await buy('sandbox_second');
    expect(await testDb()('entitlements').where({ tenant_id: t.tenant_id, is_sandbox: true })).toHaveLength(2);
    expect(await recorded(t.tenant_id)).toHaveLength(1);
  });
});
