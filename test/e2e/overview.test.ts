import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startEmulator, type RunningEmulator } from '../../emulators/common/host';
import { createEmulator } from '../../emulators/psp_a/emulator';
import { createAdapters } from '../../providers';
import { loadConfig } from '../../runtime/config';
import { attachToApp } from '../../db/app-providers';
import { withTenant } from '../../db/tenant-tx';
import { createProvenConnection } from '../helpers/connections';
import { testDb } from '../helpers/db';
import { keyWith, startApi } from '../helpers/api';
import { startTestWorker } from '../helpers/temporal';
import { expectAccessible, launchBrowser, screenshot, signUp, uniqueEmail } from './helpers/browser';

/**
 * The overview in Chromium after real purchases: three hosted checkouts at the psp_a emulator
 * (one with a trial) and a refund, each sent as the emulator's signed webhooks to the
 * service's receiver and processed by the tenant's workflows. The page's figures then equal
 * what GET /v1/subscribers and GET /v1/entitlements list, each figure links to that list,
 * the mode switch shows live apart, and axe passes at phone and desktop widths.
 */
const SKU = 'premium_monthly';

let api: Awaited<ReturnType<typeof startApi>>;
let worker: Awaited<ReturnType<typeof startTestWorker>>;
let emu: RunningEmulator;
let browser: Browser;

async function stripe(method: string, p: string, key: string, form: Record<string, string>) {
  const res = await fetch(`${emu.url}${p}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form),
  });
  const body = await res.json();
  if (!res.ok) throw new Error(`${method} ${p} → ${res.status} ${JSON.stringify(body)}`);
  return body as Record<string, string>;
}

async function control(p: string, body: unknown) {
  const res = await fetch(`${emu.url}/__control/${p}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`/__control/${p} → ${res.status} ${await res.text()}`);
  return res.json() as Promise<Record<string, unknown>>;
}

/** The number a "now" tile shows, found by its label. */
async function tile(p: Page, label: string): Promise<number> {
  const text = await p
    .getByRole('link', { name: new RegExp(`^\\d+ ${label}$`) })
    .first()
    .textContent();
  return Number(/^\s*(\d+)/.exec(text ?? '')![1]);
}

describe('dashboard overview after purchases through the emulator’s webhooks', () => {
  beforeAll(async () => {
    emu = await startEmulator(createEmulator, { port: 0 });
    worker = await startTestWorker({
      config: { providerBaseUrls: { ...loadConfig({ NODE_ENV: 'test' }).providerBaseUrls, psp_a: emu.url } },
    });
    api = await startApi({ config: worker.config, vault: worker.vault, adapters: createAdapters(worker.config) });
    browser = await launchBrowser();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await emu?.close();
    await api?.close();
    await worker?.stop();
  });

  it('shows the numbers the API lists, links each to its list, switches mode, passes axe', async () => {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const p = await ctx.newPage();
    const email = uniqueEmail('overview');
    await signUp(p, api.dashboardRoot, email);
    const { tenant_id } = await testDb()('dashboard_users').where({ email }).first();
    const { id: app_id } = await testDb()('apps').where({ tenant_id }).first();

    // The tenant's psp_a connection, its catalogue at the emulator and in the service, and its webhook endpoint.
    const acct = (await control('accounts', {})) as {
      account: string;
      credentials: { test: { secret_key: string }; live: { secret_key: string } };
      webhook_secret: string;
    };
    await withTenant(testDb(), tenant_id, async (trx) => {
      await createProvenConnection(trx, worker.vault, {
        provider: 'psp_a',
        account_ref: acct.account,
        label: 'overview',
        is_default: true,
        credentials: { test: acct.credentials.test, live: acct.credentials.live },
        webhook_secret: acct.webhook_secret,
      });
      await attachToApp(trx, app_id, 'psp_a');
    });
    const key = acct.credentials.test.secret_key;
    const prod = await stripe('POST', '/v1/products', key, { name: 'Premium (monthly)', 'metadata[sku]': SKU });
    const price = await stripe('POST', '/v1/prices', key, {
      product: prod.id,
      currency: 'usd',
      unit_amount: '999',
      'recurring[interval]': 'month',
      'metadata[sku]': SKU,
    });
    const link = await stripe('POST', '/v1/payment_links', key, {
      'line_items[0][price]': price.id,
      'line_items[0][quantity]': '1',
      'metadata[sku]': SKU,
    });
    const [product] = await testDb()('products')
      .insert({ tenant_id, app_id, sku: SKU, name: 'Premium (monthly)', tier: 'monthly' })
      .returning('id');
    await testDb()('prices').insert({
      tenant_id,
      product_id: product.id,
      country: 'US',
      currency: 'USD',
      amount_minor: 999,
    });
    await testDb()('payment_links').insert({
      tenant_id,
      app_id,
      product_id: product.id,
      provider: 'psp_a',
      mode: 'test',
      external_id: link.id,
      url: link.url,
    });
    const target = `${api.dashboardRoot}/api/webhooks/psp_a`;
    await control('webhook_endpoints', { url: target, account: acct.account });

    // Purchases: one with a trial, two paid, then the latest charge refunded.
    await control('checkout', {
      sku: SKU,
      email: 'trial@example.test',
      app_user_id: 'ov-trial',
      trial_days: 7,
      target,
      account: acct.account,
    });
    await control('checkout', {
      sku: SKU,
      email: 'paid@example.test',
      app_user_id: 'ov-paid',
      trial_days: 0,
      target,
      account: acct.account,
    });
    await control('checkout', {
      sku: SKU,
      email: 'refund@example.test',
      app_user_id: 'ov-refund',
      trial_days: 0,
      target,
      account: acct.account,
    });
    await control('events', { type: 'charge.refunded', target, account: acct.account });

    const secret = (await keyWith(tenant_id, ['subscribers:read', 'webhooks:read'])).secret_key;
    const total = async (path: string) => {
      const res = await fetch(`${api.apiUrl}${path}`, { headers: { authorization: `Bearer ${secret}` } });
      return ((await res.json()) as { pagination: { total: number } }).pagination.total;
    };
    // The webhooks are processed by workflows: wait until the API lists what the purchases made.
    await expect
      .poll(
        async () => ({
          trialing: await total('/subscribers?status=trialing&mode=test'),
          active: await total('/subscribers?status=active&mode=test'),
          refunded: await total('/subscribers?status=refunded&mode=test'),
        }),
        { timeout: 60_000 },
      )
      .toEqual({ trialing: 1, active: 1, refunded: 1 });
    const api_ = {
      active: await total('/subscribers?status=active&mode=test&provider=psp_a'),
      trialing: await total('/subscribers?status=trialing&mode=test&provider=psp_a'),
      past_due: await total('/subscribers?status=past_due&mode=test&provider=psp_a'),
      refunded: await total('/subscribers?status=refunded&mode=test&provider=psp_a'),
      canceled: await total('/subscribers?status=canceled&mode=test&provider=psp_a'),
      entitlements: await total('/entitlements?state=active&provider=psp_a'),
      grace: await total('/entitlements?state=grace_period&provider=psp_a'),
      failed: await total('/webhooks?status=failed&mode=test'),
    };

    await p.getByRole('link', { name: 'Overview' }).click();
    await p.waitForURL('**/overview');
    await p.getByRole('link', { name: 'Test', exact: true }).click();
    await p.waitForURL(/mode=test/);
    expect(await p.getByRole('link', { name: 'Test', exact: true }).getAttribute('aria-current')).toBe('page');
    expect([
      await tile(p, 'Active subscriptions'),
      await tile(p, 'In trial'),
      await tile(p, 'Past due'),
      await tile(p, 'Refunds, 30 days'),
      await tile(p, 'Cancellations, 30 days'),
      await tile(p, 'Active entitlements'),
      await tile(p, 'In grace period'),
      await tile(p, 'Webhook failures, 24 h'),
    ]).toEqual([
      api_.active,
      api_.trialing,
      api_.past_due,
      api_.refunded,
      api_.canceled,
      api_.entitlements,
      api_.grace,
      api_.failed,
    ]);
    expect(api_).toMatchObject({ active: 1, trialing: 1, refunded: 1, entitlements: 2 });
    // One active monthly subscription at USD 9.99.
    await expect(p.getByRole('link', { name: /9\.99 USD MRR in USD, 1 subscription$/ }).count()).resolves.toBe(1);
    // Today's row of the daily tables: one new trial, one refund.
    // Each chart's text alternative is its table, one click away.
    const todayRow = async (chart: string) => {
      await p.getByText(`${chart}: table`, { exact: true }).click();
      return p
        .getByRole('region', { name: `${chart}, by day` })
        .getByRole('row')
        .last()
        .textContent();
    };
    expect(await todayRow('New trials')).toMatch(/\s*\d{4}-\d{2}-\d{2}\s*1\s*$/);
    expect(await todayRow('Refunds')).toMatch(/\s*\d{4}-\d{2}-\d{2}\s*1\s*$/);
    expect(await todayRow('Active subscriptions')).toMatch(/\s*\d{4}-\d{2}-\d{2}\s*1\s*$/);
    // Health: psp_a's readiness row, as GET /v1/readiness judges it.
    const readiness = await (
      await fetch(`${api.apiUrl}/readiness`, {
        headers: { authorization: `Bearer ${(await keyWith(tenant_id, ['readiness:read'])).secret_key}` },
      })
    ).json();
    const row = readiness.providers.find((r: { provider: string }) => r.provider === 'psp_a');
    await expect(
      p.getByRole('row', { name: new RegExp(`^psp_a ${row.test_ready ? 'Ready' : 'Not ready'}`) }).textContent(),
    ).resolves.toContain(row.test_detail);

    await expectAccessible(p, 'overview (desktop)');
    await screenshot(p, 'overview-desktop');
    await p.setViewportSize({ width: 375, height: 740 });
    await expectAccessible(p, 'overview (phone)');
    await screenshot(p, 'overview-phone');
    // Nothing is wider than the phone's screen but the scrolling tables.
    expect(await p.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    await p.setViewportSize({ width: 1280, height: 900 });

    // Each figure opens the list it counts, with the matching filter, showing the same total.
    await p.getByRole('link', { name: /^\d+ Active subscriptions$/ }).click();
    await p.waitForURL(/\/subscribers\?status=active&mode=test$/);
    await expect(p.locator('main').textContent()).resolves.toContain(`${api_.active} in all.`);
    await p.goBack();
    await p.getByRole('link', { name: `Refunds, 30 days, psp_a: ${api_.refunded}` }).click();
    await p.waitForURL(/\/subscribers\?status=refunded&provider=psp_a&mode=test$/);
    await expect(p.locator('main').textContent()).resolves.toContain('ov-refund');

    // Live: nothing was bought live.
    await p.goto(`${api.dashboardRoot}/overview?mode=test`);
    await p.getByRole('link', { name: 'Live', exact: true }).click();
    await p.waitForURL(/mode=live/);
    expect(await tile(p, 'Active subscriptions')).toBe(0);
    expect(await tile(p, 'In trial')).toBe(0);
    await screenshot(p, 'overview-live');

    // A bad switch value is a 400 that says what is allowed.
    const bad = await p.goto(`${api.dashboardRoot}/overview?mode=staging`);
    expect(bad!.status()).toBe(400);
    await expect(p.getByRole('alert').textContent()).resolves.toContain('mode must be');
    await ctx.close();
  }, 240_000);

  it('is where logging in lands, and asks for a login when signed out', async () => {
    const ctx = await browser.newContext();
    const p = await ctx.newPage();
    await p.goto(`${api.dashboardRoot}/overview`);
    await p.waitForURL(/\/login\?next=%2Foverview$/);
    await ctx.close();
  });
});
