import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { SESSION_COOKIE } from '../../api/dashboard/session';
import { attachToApp } from '../../db/app-providers';
import { createSession } from '../../db/dashboard-users';
import { withTenant } from '../../db/tenant-tx';
import type { ProviderId } from '../../domain/providers';
import { SCOPES } from '../../domain/scopes';
import type { RunningEmulator } from '../../emulators/common/host';
import { createEmulatorAccount } from '../../seed/demo-providers';
import { call, keyWith, startApi } from '../helpers/api';
import { createProvenConnection, sellOnWebProvider } from '../helpers/connections';
import { testDb } from '../helpers/db';
import { useEmulatorStack } from '../helpers/emulator-stack';
import type { startTestWorker } from '../helpers/temporal';
import { makeTenant } from '../helpers/factories';
import { until } from '../helpers/until';
import { expectAccessible, launchBrowser, screenshot, signUp, uniqueEmail } from './helpers/browser';
import { closedPort } from '../helpers/closed-port';

/**
 * The dashboard's Imports page (docs/reconciliation.md, docs/dashboard.md): a newcomer whose
 * psp_a account and App Store app already have buyers starts an import with a button, follows its
 * progress to the end, and the buyers are premium with no webhook; a file with one bad line shows
 * the refusal by line number. A viewer sees no button and is refused a post.
 */
describe('dashboard: imports', () => {
  let emulators: Record<ProviderId, RunningEmulator>;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let api: Awaited<ReturnType<typeof startApi>>;
  const stack = useEmulatorStack();
  let browser: Browser;
  let tenantId: string;
  let publishableKey: string;
  let page: Page;
  const buyers = ['dash_imp_1', 'dash_imp_2'];

  const sdk = async (user: string) =>
    (await call(api.apiRoot, `/v1/sdk/subscribers/${user}`, publishableKey)).body as { is_premium: boolean };

  /** Reload the import's page until it has finished: the page is server-rendered, its progress read at each load. */
  const finished = (p: Page) =>
    until(
      'the import page says finished',
      async () => {
        await p.reload();
        return p.locator('#import-status').textContent();
      },
      (s) => s !== 'Running',
      60_000,
    );

  beforeAll(async () => {
    ({ emulators, worker, api } = stack);
    browser = await launchBrowser();
    const ctx = await browser.newContext();
    page = await ctx.newPage();
    const email = uniqueEmail('importer');
    await signUp(page, api.dashboardRoot, email);
    tenantId = (await testDb()('dashboard_users').where({ email }).first()).tenant_id;
    const app = await testDb()('apps').where({ tenant_id: tenantId }).first('id', 'publishable_key_test');
    publishableKey = app.publishable_key_test;
    // The newcomer's psp_a account already sells (connected and proven, one product synced) …
    const key = (await keyWith(tenantId, [...SCOPES])).secret_key;
    const { account } = await sellOnWebProvider({
      provider: 'psp_a',
      emulatorUrl: emulators.psp_a.url,
      vault: worker.vault,
      apiUrl: api.apiUrl,
      tenant: { tenant_id: tenantId, secret_key: key },
    });
    // … and has buyers whose every notification was lost.
    const lost = `http://127.0.0.1:${await closedPort()}/api/webhooks/psp_a`;
    for (const user of buyers) {
      const r = await fetch(`${emulators.psp_a.url}/__control/checkout`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          sku: 'pro_monthly',
          email: `${user}@example.com`,
          target: lost,
          account,
          mode: 'test',
          app_user_id: user,
        }),
      });
      expect(r.ok).toBe(true);
    }
    // Its App Store app too.
    const ios = await createEmulatorAccount(emulators.store_ios.url);
    await withTenant(testDb(), tenantId, async (trx) => {
      await createProvenConnection(trx, worker.vault, {
        provider: 'store_ios',
        account_ref: ios.account,
        credentials: ios.credentials,
      });
      await attachToApp(trx, app.id, 'store_ios');
      await trx('products').insert({
        tenant_id: tenantId,
        sku: 'premium_monthly',
        name: 'Premium',
        tier: 'monthly',
        ios_store_product_id: 'premium_monthly',
      });
    });
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('a newcomer imports the psp_a account with a button, follows it to the end, and the buyers are premium', async () => {
    for (const user of buyers) expect((await sdk(user)).is_premium).toBe(false);
    await page.goto(`${api.dashboardRoot}/overview`);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Imports' }).click();
    await page.waitForURL('**/imports');
    await expectAccessible(page, 'imports');
    await screenshot(page, 'imports');
    // A provider not yet proven has no button, only the way there.
    expect(await page.locator('main').textContent()).toContain('psp_b: connect it and verify it on Providers first.');
    await page.getByRole('button', { name: 'Import subscribers from psp_a' }).click();
    await page.waitForURL(/\/imports\/[0-9a-f-]{36}\?started=1$/);
    expect(await page.getByRole('status').textContent()).toBe('Import started.');
    expect(await finished(page)).toBe('Finished');
    expect(await page.locator('#import-imported').textContent()).toBe('2');
    expect(await page.locator('#import-refused').textContent()).toBe('0');
    expect(Number(await page.locator('#import-pages').textContent())).toBeGreaterThanOrEqual(1);
    await expectAccessible(page, 'an import');
    await screenshot(page, 'import-finished');
    for (const user of buyers)
      await until(
        `${user} premium`,
        () => sdk(user),
        (b) => b.is_premium === true,
      );
    expect(await testDb()('webhook_deliveries').where({ tenant_id: tenantId })).toEqual([]);

    // The list shows it; the write was the operation's, audited under the person's name.
    await page.getByRole('link', { name: 'All imports' }).click();
    const past = await page.getByRole('region', { name: 'Past imports' }).textContent();
    expect(past).toContain('psp_a');
    expect(past).toContain('Started by hand or the API');
    expect(past).toContain('Finished');
    const person = await testDb()('dashboard_users').where({ tenant_id: tenantId }).first('id');
    const audit = await testDb()('audit_entries').where({ tenant_id: tenantId, action: 'imports.create' });
    expect(audit.map((a) => [a.actor_type, a.actor_id, a.outcome, a.detail?.surface])).toEqual([
      ['user', person.id, 'ok', 'dashboard'],
    ]);
  });

  it('a file with one bad line: the rest imported, the refusal shown with its line number', async () => {
    const { transaction_id: tx } = (await (
      await fetch(`${emulators.store_ios.url}/__control/sandbox-purchase`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          product_id: 'premium_monthly',
          account: (
            await testDb()('provider_connections').where({ tenant_id: tenantId, provider: 'store_ios' }).first()
          ).account_ref,
          app_user_id: 'dash_ios_1',
        }),
      })
    ).json()) as { transaction_id: string };
    await page.goto(`${api.dashboardRoot}/imports`);
    await page.getByLabel('What the file holds').selectOption('store_ios');
    await page
      .getByLabel('Lines (CSV, header first)')
      .fill(`original_transaction_id,app_user_id\n${tx},dash_ios_1\n"broken,dash_ios_2\n`);
    await page.getByRole('button', { name: 'Import the file' }).click();
    await page.waitForURL(/\/imports\/[0-9a-f-]{36}\?started=1$/);
    expect(await finished(page)).toBe('Finished');
    expect(await page.locator('#import-imported').textContent()).toBe('1');
    const refused = page.getByRole('region', { name: 'Refused lines' });
    expect(await refused.locator('tbody tr td').first().textContent()).toBe('3');
    expect((await refused.locator('tbody tr td').nth(1).textContent())?.length).toBeGreaterThan(5);
    await expectAccessible(page, 'an import with a refused line');
    await screenshot(page, 'import-refused-line');
    await until(
      'dash_ios_1 premium',
      () => sdk('dash_ios_1'),
      (b) => b.is_premium === true,
    );
  });

  it('a CSV file uploaded with the file input: imported, its bad line refused by number', async () => {
    const { transaction_id: tx } = (await (
      await fetch(`${emulators.store_ios.url}/__control/sandbox-purchase`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          product_id: 'premium_monthly',
          account: (
            await testDb()('provider_connections').where({ tenant_id: tenantId, provider: 'store_ios' }).first()
          ).account_ref,
          app_user_id: 'dash_ios_file',
        }),
      })
    ).json()) as { transaction_id: string };
    await page.goto(`${api.dashboardRoot}/imports`);
    await page.getByLabel('What the file holds').selectOption('store_ios');
    // As a spreadsheet writes it: a byte-order mark and CRLF line ends.
    await page.getByLabel('CSV file (UTF-8, at most 3 MiB)').setInputFiles({
      name: 'purchases.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(`\ufefforiginal_transaction_id,app_user_id\r\n"broken,dash_ios_x\r\n${tx},dash_ios_file\r\n`),
    });
    await page.getByRole('button', { name: 'Import the file' }).click();
    await page.waitForURL(/\/imports\/[0-9a-f-]{36}\?started=1$/);
    expect(await finished(page)).toBe('Finished');
    expect(await page.locator('#import-imported').textContent()).toBe('1');
    const refused = page.getByRole('region', { name: 'Refused lines' });
    expect(await refused.locator('tbody tr td').first().textContent()).toBe('2');
    await until(
      'dash_ios_file premium',
      () => sdk('dash_ios_file'),
      (b) => b.is_premium === true,
    );
  });

  it('a file past 3 MiB, or not UTF-8 text, gets the form’s message (not a fault) and starts nothing', async () => {
    const before = await testDb()('imports').where({ tenant_id: tenantId }).count('* as n');
    const header = 'original_transaction_id,app_user_id\n';
    const files = [
      {
        file: { name: 'big.csv', mimeType: 'text/csv', buffer: Buffer.from(header + 'x'.repeat(3.5 * 1024 * 1024)) },
        message: /larger than 3 MiB/,
        status: 413,
      },
      {
        file: { name: 'photo.png', mimeType: 'image/png', buffer: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2]) },
        message: /not a text file in UTF-8/,
        status: 400,
      },
      {
        file: { name: 'latin1.csv', mimeType: 'text/csv', buffer: Buffer.from(header + 'caf\xe9,u1\n', 'latin1') },
        message: /not a text file in UTF-8/,
        status: 400,
      },
    ];
    for (const { file, message, status } of files) {
      await page.goto(`${api.dashboardRoot}/imports`);
      await page.getByLabel('What the file holds').selectOption('store_ios');
      await page.getByLabel('CSV file (UTF-8, at most 3 MiB)').setInputFiles(file);
      const [answer] = await Promise.all([
        page.waitForResponse((r) => r.url().endsWith('/imports/file')),
        page.getByRole('button', { name: 'Import the file' }).click(),
      ]);
      expect([file.name, answer.status()]).toEqual([file.name, status]);
      expect(await page.getByRole('alert').textContent()).toMatch(message);
      expect(await page.getByLabel('What the file holds').inputValue()).toBe('store_ios');
    }
    await expectAccessible(page, 'imports with a refused file');
    expect(await testDb()('imports').where({ tenant_id: tenantId }).count('* as n')).toEqual(before);
  });

  it('a multipart post without the security token, or with another one, is refused with 403', async () => {
    const before = await testDb()('imports').where({ tenant_id: tenantId }).count('* as n');
    const file = { name: 'p.csv', mimeType: 'text/csv', buffer: Buffer.from('original_transaction_id,app_user_id\n') };
    for (const csrf of [undefined, 'not-the-token']) {
      const r = await page.request.post(`${api.dashboardRoot}/imports/file`, {
        multipart: { ...(csrf ? { _csrf: csrf } : {}), format: 'store_ios', file },
        maxRedirects: 0,
      });
      expect(r.status()).toBe(403);
      expect(await r.text()).toContain('security token');
    }
    expect(await testDb()('imports').where({ tenant_id: tenantId }).count('* as n')).toEqual(before);
  });

  it('a file the import refuses as a whole keeps the form filled and says why', async () => {
    await page.goto(`${api.dashboardRoot}/imports`);
    await page.getByLabel('What the file holds').selectOption('store_android');
    await page.getByLabel('Lines (CSV, header first)').fill('token,user\nabc,u1\n');
    await page.getByRole('button', { name: 'Import the file' }).click();
    expect(await page.getByRole('alert').textContent()).toMatch(/purchase_token/);
    expect(await page.getByLabel('Lines (CSV, header first)').inputValue()).toContain('abc,u1');
    await expectAccessible(page, 'imports with an error');
  });

  it('a viewer sees the imports but no button, and a post is refused with 403', async () => {
    const [viewer] = await testDb()('dashboard_users')
      .insert({ tenant_id: tenantId, email: uniqueEmail('viewer'), role: 'viewer', password_hash: 'unused' })
      .returning(['id', 'tenant_id', 'email', 'role']);
    const session = await createSession(testDb(), viewer);
    const ctx = await browser.newContext();
    await ctx.addCookies([{ name: SESSION_COOKIE, value: session.token, url: api.dashboardRoot }]);
    const p = await ctx.newPage();
    await p.goto(`${api.dashboardRoot}/imports`);
    expect(await p.getByRole('region', { name: 'Past imports' }).textContent()).toContain('psp_a');
    expect(await p.getByRole('button', { name: /Import/ }).count()).toBe(0);
    const csrf = await p.locator('input[name="_csrf"]').first().inputValue();
    const before = await testDb()('imports').where({ tenant_id: tenantId }).count('* as n');
    for (const path of ['/imports/provider', '/imports/file']) {
      const r = await p.request.post(api.dashboardRoot + path, {
        form: { _csrf: csrf, provider: 'psp_a', format: 'store_ios', csv: 'original_transaction_id,app_user_id\n' },
        maxRedirects: 0,
      });
      expect([path, r.status()]).toEqual([path, 403]);
    }
    expect(await testDb()('imports').where({ tenant_id: tenantId }).count('* as n')).toEqual(before);
    await ctx.close();
  });

  it('another tenant’s import is not found, like one that does not exist', async () => {
    const other = await makeTenant('dashboard-imports-other');
    const [theirs] = await testDb()('imports')
      .insert({ tenant_id: other.tenant_id, provider: 'psp_a', source: 'provider_api' })
      .returning('id');
    for (const id of [theirs.id, crypto.randomUUID()]) {
      const r = await page.goto(`${api.dashboardRoot}/imports/${id}`);
      expect(r?.status()).toBe(404);
      expect(await page.getByRole('alert').textContent()).toBe('No such import.');
    }
    expect((await page.goto(`${api.dashboardRoot}/imports`))?.status()).toBe(200);
    expect(await page.getByRole('region', { name: 'Past imports' }).textContent()).not.toContain(theirs.id);
  });
});
