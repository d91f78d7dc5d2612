import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { Browser } from 'playwright-core';
import { startEmulator, type RunningEmulator } from '../../emulators/common/host';
import { createEmulator } from '../../emulators/psp_a/emulator';
import { startApi } from '../helpers/api';
import { testDb } from '../helpers/db';
import { getOrPostControlFor } from '../helpers/emulator-control';
import { startTestWorker } from '../helpers/temporal';
import { loadConfig } from '../../runtime/config';
import { launchBrowser, screenshot, signUp, uniqueEmail } from './helpers/browser';

describe('dashboard: providers in a real browser', () => {
  let emu: RunningEmulator;
  let api: Awaited<ReturnType<typeof startApi>>;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let browser: Browser;
  let control: ReturnType<typeof getOrPostControlFor>;
  beforeAll(async () => {
    emu = await startEmulator(createEmulator, { port: 0 });
    control = getOrPostControlFor(() => emu.url);
    const platform = await control<{ client_id: string; credentials: { test: { secret_key: string } } }>('/accounts', {
      account: 'acct_platform',
    });
    // A worker runs the connection proofs the dashboard starts (probe workflow).
    worker = await startTestWorker({
      config: { providerBaseUrls: { ...loadConfig({ NODE_ENV: 'test' }).providerBaseUrls, psp_a: emu.url } },
    });
    const base = worker.config;
    api = await startApi({
      config: {
        ...base,
        providerBaseUrls: { ...base.providerBaseUrls, psp_a: emu.url },
        oauthClients: { psp_a: { client_id: platform.client_id, client_secret: platform.credentials.test.secret_key } },
        publicDashboardUrl: 'https://billing.example.test',
      },
    });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await api?.close();
    await worker?.stop();
    await emu?.close();
  });

  it('OAuth round trip against the psp_a emulator ends back on the dashboard with the connection listed', async () => {
    // The redirect_uri is PUBLIC_DASHBOARD_URL's: for the round trip, this test's listener is it.
    const configured = api.services.config.publicDashboardUrl;
    api.services.config.publicDashboardUrl = api.dashboardRoot;
    onTestFinished(() => {
      api.services.config.publicDashboardUrl = configured;
    });
    const ctx = await browser.newContext();
    const p = await ctx.newPage();
    const email = uniqueEmail('oauth');
    await signUp(p, api.dashboardRoot, email);
    await p.getByRole('link', { name: 'Providers' }).click();
    await screenshot(p, 'providers');
    await p.getByRole('link', { name: 'Connect psp_a' }).click();
    // The emulator's consent page, on the emulator's origin.
    await p.waitForURL(emu.url + '/**');
    await p.getByRole('button', { name: 'Connect' }).click();
    await p.waitForURL(`${api.dashboardRoot}/providers?connected=*`);
    await expect(p.getByRole('status').textContent()).resolves.toContain('Connected');

    const user = await testDb()('dashboard_users').where({ email }).first();
    const conns = await testDb()('provider_connections').where({ tenant_id: user.tenant_id });
    expect(conns).toHaveLength(1);
    expect(conns[0]).toMatchObject({ provider: 'psp_a', is_default: true });
    expect(conns[0].account_ref).toMatch(/^acct_/);
    expect(conns[0].credential_test_enc).toBeTruthy();
    // OAuth's consent named the account: proven as it is stored, so its events route at once.
    expect(conns[0].verified_by).toBe('oauth');
    expect(conns[0].verified_at).toBeInstanceOf(Date);
    const row = p.getByRole('row', { name: new RegExp(conns[0].account_ref) });
    await expect(row.textContent()).resolves.toContain('psp_a');
    await expect(row.textContent()).resolves.toContain('Verified (OAuth)');
    const audit = await testDb()('audit_entries')
      .where({ tenant_id: user.tenant_id, action: 'providers.connect_oauth' })
      .first();
    expect(audit).toMatchObject({ actor_type: 'user', actor_id: user.id, outcome: 'ok' });
    await ctx.close();
  });

  it('the OAuth redirect_uri comes from PUBLIC_DASHBOARD_URL, never from Host or X-Forwarded-Host', async () => {
    const ctx = await browser.newContext();
    const p = await ctx.newPage();
    await signUp(p, api.dashboardRoot, uniqueEmail('oauth-host'));
    const cookie = (await ctx.cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
    const location = await new Promise<string>((resolve, reject) => {
      const req = http.request(
        `${api.dashboardRoot}/providers/psp_a/oauth/start`,
        {
          headers: { cookie, host: 'evil.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' },
        },
        (res) => {
          res.resume();
          resolve(res.headers.location ?? '');
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(new URL(location).searchParams.get('redirect_uri')).toBe(
      'https://billing.example.test/providers/psp_a/oauth/callback',
    );
    await ctx.close();
  });

  it('a callback whose state does not match the browser’s is refused and connects nothing', async () => {
    const ctx = await browser.newContext();
    const p = await ctx.newPage();
    const email = uniqueEmail('oauth-forged');
    await signUp(p, api.dashboardRoot, email);
    const resp = await p.goto(`${api.dashboardRoot}/providers/psp_a/oauth/callback?code=ac_forged&state=attacker`);
    expect(resp!.status()).toBe(400);
    const user = await testDb()('dashboard_users').where({ email }).first();
    expect(await testDb()('provider_connections').where({ tenant_id: user.tenant_id })).toHaveLength(0);
    await ctx.close();
  });

  it('webhook signing secret and credentials are stored, shown only as "set", never shown back; default can be moved', async () => {
    const ctx = await browser.newContext();
    const p = await ctx.newPage();
    const email = uniqueEmail('secrets');
    await signUp(p, api.dashboardRoot, email);
    await p.goto(`${api.dashboardRoot}/providers`);
    for (const account of ['acct_first', 'acct_second']) {
      await p.getByLabel('Provider').selectOption('psp_b');
      await p.getByLabel('Account ID').fill(account);
      await p.getByRole('button', { name: 'Add connection' }).click();
      await p.waitForURL(/\/providers\/[0-9a-f-]{36}$/);
      if (account === 'acct_first') await p.goto(`${api.dashboardRoot}/providers`);
    }
    // On the second connection's page: the webhook URL, "not set" everywhere.
    const body = () => p.locator('main').textContent();
    await expect(body()).resolves.toContain('https://billing.example.test/api/webhooks/psp_b');
    await expect(body()).resolves.toMatch(/Webhook secret\s*not set/);

    const webhookSecret = 'whsec_' + 'x7Yq'.repeat(8);
    const apiKey = 'psp_b_test_' + 'K3y'.repeat(10);
    await p.getByLabel('Webhook signing secret').fill(webhookSecret);
    await p.getByLabel('Test API key').fill(apiKey);
    await p.getByRole('button', { name: 'Save secrets' }).click();
    await expect(p.getByRole('status').textContent()).resolves.toContain('webhook secret');
    await screenshot(p, 'provider-connection');
    await expect(body()).resolves.toMatch(/Webhook secret\s*set/);
    await expect(body()).resolves.toMatch(/Test credential\s*set/);
    await expect(body()).resolves.toMatch(/Live credential\s*not set/);
    for (const html of [
      await p.content(),
      await (await p.reload())!.text(),
      await (await p.goto(`${api.dashboardRoot}/providers`))!.text(),
    ]) {
      expect(html).not.toContain(webhookSecret);
      expect(html).not.toContain(apiKey);
    }
    const user = await testDb()('dashboard_users').where({ email }).first();
    const stored = await testDb()('provider_connections')
      .where({ tenant_id: user.tenant_id, account_ref: 'acct_second' })
      .first();
    expect(stored.webhook_secret_enc).toBeTruthy();
    expect(String(stored.webhook_secret_enc)).not.toContain(webhookSecret); // encrypted by the vault
    const audit = await testDb()('audit_entries').where({ tenant_id: user.tenant_id, actor_type: 'user' });
    expect(JSON.stringify(audit)).not.toContain(webhookSecret);
    expect(JSON.stringify(audit)).not.toContain(apiKey);

    // The first connection was the default; make the second one default instead.
    expect(stored.is_default).toBe(false);
    await p.goto(`${api.dashboardRoot}/providers/${stored.id}`);
    await p.getByRole('button', { name: 'Make default' }).click();
    await expect(p.getByRole('status').textContent()).resolves.toContain('default');
    const defaults = await testDb()('provider_connections')
      .where({ tenant_id: user.tenant_id, is_default: true })
      .pluck('account_ref');
    expect(defaults).toEqual(['acct_second']);
    await ctx.close();
  });

  it('store credentials (Play service-account JSON, App Store Connect key) are entered the same way and never shown back', async () => {
    const ctx = await browser.newContext();
    const p = await ctx.newPage();
    const email = uniqueEmail('stores');
    await signUp(p, api.dashboardRoot, email);
    const playKey = {
      type: 'service_account',
      client_email: 'sa@proj.iam.gserviceaccount.com',
      private_key: '-----BEGIN PRIVATE KEY-----\\nMIIEsecretPLAY\\n-----END PRIVATE KEY-----\\n',
    };
    const serviceAccount = JSON.stringify({ ...playKey, token_uri: 'https://oauth2.googleapis.com/token' });
    const p8 = '-----BEGIN PRIVATE KEY-----\nMIGTsecretAPPLE\n-----END PRIVATE KEY-----';
    for (const [provider, account] of [
      ['store_android', 'com.example.android'],
      ['store_ios', 'com.example.ios'],
    ]) {
      await p.goto(`${api.dashboardRoot}/providers`);
      await p.getByLabel('Provider').selectOption(provider);
      await p.getByLabel('Account ID').fill(account);
      await p.getByRole('button', { name: 'Add connection' }).click();
      await p.waitForURL(/\/providers\/[0-9a-f-]{36}$/);
      if (provider === 'store_android') {
        // A token_uri that is not Google's is refused when saved: the service would otherwise POST the key's grant there.
        await p
          .getByLabel('Live Service-account JSON')
          .fill(JSON.stringify({ ...playKey, token_uri: 'http://169.254.169.254/token' }));
        const [refused] = await Promise.all([
          p.waitForResponse((r) => r.request().method() === 'POST'),
          p.getByRole('button', { name: 'Save secrets' }).click(),
        ]);
        expect(refused.status()).toBe(400);
        await expect(p.getByRole('alert').textContent()).resolves.toMatch(
          /The service-account JSON has a token_uri that is not Google's token endpoint/,
        );
        await expect(p.locator('main').textContent()).resolves.not.toMatch(/Live credential\s*set/);
        expect(await p.content()).not.toContain('MIIEsecretPLAY');
        await p.getByLabel('Live Service-account JSON').fill(serviceAccount);
        await p
          .getByLabel('Push subscription audience')
          .fill('https://billing.example.test/api/webhooks/store_android');
      } else {
        await p.getByLabel('Live Issuer ID').fill('57246542-96fe-1a63-e053-0824d011072a');
        await p.getByLabel('Live Key ID').fill('2X9R4HXF34');
        await p.getByLabel('Live Private key (.p8)').fill(p8);
        await p.getByLabel('Live Bundle ID').fill('com.example.ios');
      }
      await p.getByRole('button', { name: 'Save secrets' }).click();
      await expect(p.locator('main').textContent()).resolves.toMatch(/Live credential\s*set/);
      const page = await p.content();
      expect(page).not.toContain('MIIEsecretPLAY');
      expect(page).not.toContain('MIGTsecretAPPLE');
    }
    await ctx.close();
  });

  it('pasted keys are verified with the provider: the Verify button shows verified, or why not (a key of another account)', async () => {
    type Account = { account: string; credentials: { test: { secret_key: string } } };
    const mine = await control<Account>('/accounts', {});
    const someoneElses = await control<Account>('/accounts', {});
    const ctx = await browser.newContext();
    const p = await ctx.newPage();
    const email = uniqueEmail('verify');
    await signUp(p, api.dashboardRoot, email);
    const user = await testDb()('dashboard_users').where({ email }).first();
    const body = () => p.locator('main').textContent();

    // Someone else's account id, with my own key: the call succeeds but names another account.
    await p.goto(`${api.dashboardRoot}/providers`);
    await p.getByLabel('Provider').selectOption('psp_a');
    await p.getByLabel('Account ID').fill(someoneElses.account);
    await p.getByRole('button', { name: 'Add connection' }).click();
    await p.waitForURL(/\/providers\/[0-9a-f-]{36}$/);
    await expect(body()).resolves.toMatch(/Verified\s*Not verified/);
    await p.getByLabel('Test Secret key').fill(mine.credentials.test.secret_key);
    await p.getByRole('button', { name: 'Save secrets' }).click();
    await p.getByRole('button', { name: 'Verify' }).click();
    await expect(p.getByRole('alert').textContent()).resolves.toMatch(
      /Not verified: test: .*does not have access to account/,
    );
    const claimed = await testDb()('provider_connections')
      .where({ tenant_id: user.tenant_id, account_ref: someoneElses.account })
      .first();
    expect(claimed.verified_at).toBeNull();

    // My own account id with my key: verified.
    await p.goto(`${api.dashboardRoot}/providers`);
    await p.getByLabel('Provider').selectOption('psp_a');
    await p.getByLabel('Account ID').fill(mine.account);
    await p.getByRole('button', { name: 'Add connection' }).click();
    await p.waitForURL(/\/providers\/[0-9a-f-]{36}$/);
    await p.getByLabel('Test Secret key').fill(mine.credentials.test.secret_key);
    await p.getByRole('button', { name: 'Save secrets' }).click();
    await p.getByRole('button', { name: 'Verify' }).click();
    await expect(p.getByRole('status').textContent()).resolves.toContain('Verified');
    await expect(body()).resolves.toMatch(/Verified\s*Verified \(provider call\)/);
    const proven = await testDb()('provider_connections')
      .where({ tenant_id: user.tenant_id, account_ref: mine.account })
      .first();
    expect(proven).toMatchObject({ verified_by: 'provider_call', proof_error: null });
    await p.goto(`${api.dashboardRoot}/providers`);
    await expect(p.getByRole('row', { name: new RegExp(mine.account) }).textContent()).resolves.toContain(
      'Verified (provider call)',
    );
    await expect(p.getByRole('row', { name: new RegExp(someoneElses.account) }).textContent()).resolves.toContain(
      'Not verified',
    );
    await ctx.close();
  });

  it('another tenant’s connection id is not found', async () => {
    const owner = await browser.newContext();
    const a = await owner.newPage();
    await signUp(a, api.dashboardRoot, uniqueEmail('iso-a'));
    await a.goto(`${api.dashboardRoot}/providers`);
    await a.getByLabel('Provider').selectOption('psp_c');
    await a.getByLabel('Account ID').fill('acct_isolated');
    await a.getByRole('button', { name: 'Add connection' }).click();
    await a.waitForURL(/\/providers\/[0-9a-f-]{36}$/);
    const theirs = a.url();
    const intruder = await browser.newContext();
    const b = await intruder.newPage();
    await signUp(b, api.dashboardRoot, uniqueEmail('iso-b'));
    expect((await b.goto(theirs))!.status()).toBe(404);
    await owner.close();
    await intruder.close();
  });
});
