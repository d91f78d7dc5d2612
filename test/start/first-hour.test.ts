import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFile, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { Purchases } from '@revenuecat/purchases-js';
import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import { ROOT_DIR } from '../../runtime/config';
import { freePort } from '../../runtime/ports';
import { RC_ERROR } from '../../domain/revenuecat';
import { call } from '../helpers/api';
import { controlFor } from '../helpers/emulator-control';
import {
  bannerField,
  freshPorts,
  freshStartEnv,
  isAlive,
  killGroups,
  startOrchestrator,
  type StartedStack,
} from '../helpers/fresh-start';
import {
  Assistant,
  connectedClient,
  finishSignIn,
  loopbackRedirect,
  startSignIn,
  toolText,
  toolsList,
} from '../helpers/mcp-assistant';
import { androidReceiptBody, iosReceiptBody, postReceipt, stockPurchases } from '../helpers/revenuecat';
import { until } from '../helpers/until';
import { launchBrowser } from '../e2e/helpers/browser';

const run = promisify(execFile);

/**
 * A newcomer's first hour on one `npm start` (its own ports and data dir), started as a process
 * manager would, the orchestrator itself (`node scripts/start.ts`), so a signal can be sent to it
 * alone; one start's data serves every story below, since each start costs seconds of CPU in six
 * processes:
 *
 * - the banner's dashboard login opens the overview; the demo's year of history draws every chart;
 *   the banner's SDK line installs into an empty folder and answers `isPremium()`; an outbound
 *   webhook endpoint on loopback is accepted;
 * - SIGTERM to the orchestrator alone stops every child, the Temporal dev server and Postgres
 *   included; the second start has the same data (the same login, the history not written again);
 * - on that second start, following the README's first hour word for word (the tool server URL and
 *   the consent click, the `proxyURL` line and the Developer API page's key), the stock clients:
 *   - the official MCP TypeScript client's own OAuth flow: discovery from the tool server's 401,
 *     dynamic registration, PKCE, consent in Chromium with the banner's dashboard login (approved
 *     once, denied once), a tool call, refresh rotation, RFC 7009 revocation (then 401 with the
 *     metadata pointer);
 *   - RevenueCat's web SDK (`@revenuecat/purchases-js`, unmodified): offerings from the demo's
 *     paywall and prices, customer info before and after a psp_a checkout through the started
 *     emulators (the entitlement's expiry is the one `/v1` answers), `identifyUser` from the
 *     anonymous id that bought, `changeUser` away and back;
 *   - the iOS and Android SDKs' receipt requests (test/helpers/revenuecat.ts cites their sources)
 *     through the started store emulators, with keys minted on the same page;
 * - SIGINT to the orchestrator alone stops every child of the second start.
 */
describe('npm start: the first hour, and RevenueCat’s stock SDK and the official MCP client on it', () => {
  const fresh = freshStartEnv('billing-first-hour-');
  const { dataDir, env } = fresh;
  const started: ChildProcess[] = [];
  const closers: (() => Promise<void>)[] = [];
  const installDir = fs.mkdtempSync(path.join(os.tmpdir(), 'billing-newcomer-app-'));
  let stack: StartedStack;
  let ports: Record<string, string>;
  let browser: Browser;
  let page: Page;
  let api = '';
  let dashboard = '';
  let tools = '';
  /** What the README's first hour tells a newcomer, on this stack's ports. */
  const readme = { toolServer: '', proxyURL: '' };
  const keys = { web: '', ios: '', android: '' };

  beforeAll(async () => {
    ports = await freshPorts();
    api = `http://127.0.0.1:${ports.API_PORT}`;
    dashboard = `http://127.0.0.1:${ports.DASHBOARD_PORT}`;
    tools = `http://127.0.0.1:${ports.TOOLS_PORT}`;
    const text = fs.readFileSync(path.join(ROOT_DIR, 'README.md'), 'utf8');
    const firstHour = text.slice(text.indexOf('The banner is the first hour'), text.indexOf('## URLs'));
    const onPorts = (url: string) =>
      url
        .replace('127.0.0.1:4000', `127.0.0.1:${ports.API_PORT}`)
        .replace('127.0.0.1:4002', `127.0.0.1:${ports.TOOLS_PORT}`);
    readme.toolServer = onPorts(/\*\*Assistants\*\*: [^`]*`(http:\/\/[^`]+)`/.exec(firstHour)![1]);
    readme.proxyURL = onPorts(/proxyURL: '([^']+)'/.exec(firstHour)![1]);
    browser = await launchBrowser();
  }, 360_000);

  afterAll(async () => {
    await browser?.close();
    for (const c of closers) await c();
    // Ctrl-C's path (the orchestrator stops its children), then the group, whatever is left.
    if (stack?.proc.exitCode === null) {
      process.kill(stack.proc.pid!, 'SIGTERM');
      await until(
        'npm start stopped',
        async () => stack.proc.exitCode,
        (c) => c !== null,
        30_000,
      ).catch(() => null);
    }
    killGroups(started);
    fs.rmSync(installDir, { recursive: true, force: true });
    fs.rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  const start = (portEnv: NodeJS.ProcessEnv) => startOrchestrator({ dataDir, env }, portEnv, started);

  /** Signal the orchestrator alone, then every process it owned is gone within the bound. */
  async function stopsEverything(s: StartedStack, signal: NodeJS.Signals) {
    expect(Object.keys(s.owned).sort()).toEqual([
      'api',
      'emulators',
      'outbound-worker',
      'postgres',
      'temporal',
      'worker',
    ]);
    for (const pid of Object.values(s.owned)) expect(isAlive(pid)).toBe(true);
    process.kill(s.proc.pid!, signal);
    await s.exit;
    const left = await until(
      `every child gone after ${signal}`,
      async () => Object.entries(s.owned).filter(([, pid]) => isAlive(pid)),
      (l) => l.length === 0,
      30_000,
    ).catch(() => Object.entries(s.owned).filter(([, pid]) => isAlive(pid)));
    expect(left).toEqual([]);
  }

  it('banner login, history, SDK line, loopback endpoint; SIGTERM to the orchestrator alone stops every child; the second start has the same data', async () => {
    const first = await start(ports);
    const loginUrl = bannerField(first.banner, 'Dashboard login')!;
    const email = bannerField(first.banner, 'Email')!;
    const password = bannerField(first.banner, 'Password')!;
    expect(loginUrl).toBe(`${dashboard}/login`);
    expect(email).toMatch(/^demo-[0-9a-f]{8}@example\.com$/);
    expect(password.length).toBeGreaterThanOrEqual(24);
    expect(first.banner).toMatch(/Outbound webhooks may go to loopback and private addresses/);

    // The banner's login, in a browser, lands on the overview; the header's name leads back there.
    page = await browser.newPage();
    await page.goto(loginUrl);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL('**/overview');
    await expect(page.locator('h1').textContent()).resolves.toBe('Overview');
    await page.getByRole('link', { name: 'Billing service' }).click();
    await page.waitForURL('**/overview');

    // The demo's year of history, written in the background after the banner: every chart has figures.
    expect(first.banner).toMatch(/Demo history\s+a year of generated buyers, being written in the background/);
    await until(
      'the demo history written',
      async () => first.output(),
      (t) => /Demo history (written|failed)/.test(t),
      240_000,
    );
    expect(first.output()).toMatch(/Demo history written/);
    const charts = (await (
      await fetch(`${api}/v1/charts`, {
        headers: { authorization: `Bearer ${bannerField(first.banner, 'Secret key')}` },
      })
    ).json()) as { data: { name: string }[] };
    const figures: Record<string, unknown> = {};
    for (const { name } of charts.data) {
      const r = await fetch(`${api}/v1/charts/${name}`, {
        headers: { authorization: `Bearer ${bannerField(first.banner, 'Secret key')}` },
      });
      const body = (await r.json()) as { series: { values: (number | null)[] }[] };
      expect([name, r.status]).toEqual([name, 200]);
      expect(
        body.series.some((s) => s.values.some((v) => v !== null && v !== 0)),
        `${name} has figures`,
      ).toBe(true);
      figures[name] = body.series;
    }
    expect(Object.keys(figures)).toContain('revenue_by_country');
    await page.goto(`${dashboard}/charts/revenue_by_country`);
    const cells = await page.locator('figure.chart tbody td').allTextContents();
    expect(
      cells.some((c) => /[1-9]/.test(c)),
      'revenue by country drawn with figures',
    ).toBe(true);
    expect(await page.locator('figure.chart svg[role="img"]').count()).toBeGreaterThan(0);
    await page.goto(`${dashboard}/overview`);

    // The SDK line: the same on the Developer API page as in the banner.
    const installLine = /SDK\s+(npm install \S+)/.exec(first.banner)![1];
    expect(installLine).toBe(`npm install ${dashboard}/sdk/billing-service-sdk-2.0.0.tgz`);
    await page.getByRole('link', { name: 'Developer API' }).click();
    await expect(page.locator('code.sdk-install').first().textContent()).resolves.toBe(installLine);

    // As a newcomer: an empty folder, the printed command (no registry reachable: nothing else is fetched).
    await run(
      'npm',
      [
        ...installLine.split(' ').slice(1),
        '--no-audit',
        '--no-fund',
        '--no-update-notifier',
        `--cache=${path.join(installDir, '.npm-cache')}`,
        '--registry=http://127.0.0.1:9/',
      ],
      { cwd: installDir },
    );
    fs.writeFileSync(
      path.join(installDir, 'check.mjs'),
      `import { Billing } from '@billing-service/sdk';
const billing = Billing.configure({ publishableKey: process.argv[2], backend: process.argv[3], appUserId: process.argv[4], platform: 'web' });
console.log(JSON.stringify(await billing.isPremium()));`,
    );
    const publishable = bannerField(first.banner, 'Publishable key')!;
    const premium = async (user: string) =>
      JSON.parse((await run(process.execPath, ['check.mjs', publishable, api, user], { cwd: installDir })).stdout);
    expect(await premium('user_bob')).toBe(true); // the demo's trialing test subscriber
    expect(await premium('newcomer-nobody')).toBe(false);
    // The module for a <script type="module">, readable from an app's own origin.
    const esm = await fetch(`${dashboard}/sdk/2.0.0/index.js`, { headers: { origin: 'http://app.example' } });
    expect([esm.status, esm.headers.get('content-type'), esm.headers.get('access-control-allow-origin')]).toEqual([
      200,
      'text/javascript; charset=utf-8',
      '*',
    ]);

    // Under npm start a developer points an endpoint at a backend on this machine.
    const secretKey = bannerField(first.banner, 'Secret key')!;
    const hookUrl = `http://127.0.0.1:${await freePort()}/hooks`;
    const created = await fetch(`${api}/v1/webhook-endpoints`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secretKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: hookUrl }),
    });
    expect([created.status, ((await created.json()) as { url: string }).url]).toEqual([200, hookUrl]);

    await stopsEverything(first, 'SIGTERM');

    const second = await start(ports);
    stack = second;
    expect([bannerField(second.banner, 'Email'), bannerField(second.banner, 'Password')]).toEqual([email, password]);
    // Made once: the second start writes no history again, and the figures are the same.
    expect(second.banner).toMatch(/Demo history\s+a year of buyers: every chart has figures/);
    const again = await fetch(`${api}/v1/charts/revenue_by_provider`, {
      headers: { authorization: `Bearer ${secretKey}` },
    });
    expect(((await again.json()) as { series: unknown }).series).toEqual(figures.revenue_by_provider);
    // The stock clients below log in afresh: a new page is a new browser context, without this session.
    await page.close();
    page = await browser.newPage();
  }, 600_000);

  it('the README’s first hour names what the banner prints: the tool server URL and the proxyURL', () => {
    expect(readme.toolServer).toBe(`${tools}/`);
    expect(bannerField(stack.banner, 'Tool server')).toBe(readme.toolServer);
    expect(stack.banner).toMatch(/Tool server .*an assistant given this URL signs in on the dashboard's consent page/);
    expect(readme.proxyURL).toBe(`${api}/revenuecat`);
    expect(bannerField(stack.banner, 'RevenueCat SDKs +proxyURL')).toBe(readme.proxyURL);
    expect(stack.banner).toContain('Developer API → Create RevenueCat key');
  });

  /** The person's log-in, with the banner's pair, as the README says. */
  async function logIn() {
    await page.getByLabel('Email').fill(bannerField(stack.banner, 'Email')!);
    await page.getByLabel('Password').fill(bannerField(stack.banner, 'Password')!);
    await page.getByRole('button', { name: 'Log in' }).click();
  }

  it('an MCP client given the tool server URL signs in: discovery, registration, consent approved in the browser, a tool call, refresh, revocation; a second one denied', async () => {
    const toolsRoot = readme.toolServer.replace(/\/$/, '');
    // Discovery starts here: the tool server's 401 points at its protected-resource metadata.
    const bare = await fetch(readme.toolServer, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    });
    expect(bare.status).toBe(401);
    expect(bare.headers.get('www-authenticate')).toContain(
      `resource_metadata="${tools}/.well-known/oauth-protected-resource"`,
    );

    const back = await loopbackRedirect();
    closers.push(back.close);
    const a = new Assistant('Stock Assistant', back.redirect);
    const authorizationUrl = await startSignIn(a, toolsRoot);
    // The client found the dashboard as the authorization server, registered itself there and asks with PKCE for this resource.
    expect(authorizationUrl.origin).toBe(dashboard);
    expect(a.client?.client_id).toBeTruthy();
    expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorizationUrl.searchParams.get('resource')).toBe(`${tools}/`);

    // The person: signed out, logs in with the banner's pair, lands on the consent page, clicks Approve.
    await page.goto(authorizationUrl.href);
    await page.waitForURL(/\/login\?next=/);
    await logIn();
    await page.waitForURL(/\/assistants\/consent\//);
    const facts = await page.locator('dl').innerText();
    expect(facts).toContain('Stock Assistant');
    expect(facts).toContain(new URL(back.redirect).host);
    expect(facts).toContain(bannerField(stack.banner, 'Email')!);
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.waitForURL(`${back.redirect}?**`);
    const arrived = back.arrivals.at(-1)!;
    expect(arrived.searchParams.get('error')).toBeNull();

    // The client exchanges the code itself and calls a tool as the person: the demo's catalogue.
    const client = await finishSignIn(a, toolsRoot, arrived.searchParams.get('code')!);
    const products = await client.callTool({ name: 'billing_products', arguments: {} });
    expect(products.isError, toolText(products)).toBeFalsy();
    expect(toolText(products)).toContain('premium_monthly');
    await client.close();

    // Refresh rotates: a new pair from the client's own refresh, and the tools answer it.
    const first = { ...a.saved! };
    expect(first.refresh_token).toBeTruthy();
    expect(await auth(a, { serverUrl: new URL(readme.toolServer) })).toBe('AUTHORIZED');
    expect(a.saved!.refresh_token).toBeTruthy();
    expect(a.saved!.refresh_token).not.toBe(first.refresh_token);
    expect(a.saved!.access_token).not.toBe(first.access_token);
    const again = await connectedClient(a, toolsRoot);
    expect((await again.callTool({ name: 'billing_products', arguments: {} })).isError).toBeFalsy();
    await again.close();

    // RFC 7009 revocation at the endpoint the metadata names; then 401 with the pointer, so the client knows to sign in again.
    const metadata = (await (await fetch(`${dashboard}/.well-known/oauth-authorization-server`)).json()) as {
      revocation_endpoint: string;
    };
    const revoked = await fetch(metadata.revocation_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: a.saved!.access_token, client_id: a.client!.client_id }),
    });
    expect(revoked.status).toBe(200);
    const after = await toolsList(toolsRoot, a.saved!.access_token);
    expect(after.status).toBe(401);
    expect(after.headers.get('www-authenticate')).toContain(
      `resource_metadata="${tools}/.well-known/oauth-protected-resource"`,
    );

    // A second assistant, which the signed-in person denies: access_denied, nothing to exchange.
    const denyBack = await loopbackRedirect();
    closers.push(denyBack.close);
    const d = new Assistant('Unwanted Assistant', denyBack.redirect);
    await page.goto((await startSignIn(d, toolsRoot)).href);
    await page.waitForURL(/\/assistants\/consent\//);
    await expect(page.locator('dl').innerText()).resolves.toContain('Unwanted Assistant');
    await page.getByRole('button', { name: 'Deny' }).click();
    await page.waitForURL(`${denyBack.redirect}?**`);
    const denied = denyBack.arrivals.at(-1)!;
    expect(denied.searchParams.get('error')).toBe('access_denied');
    expect(denied.searchParams.get('code')).toBeNull();
    expect(d.saved).toBeUndefined();
    expect(await auth(d, { serverUrl: new URL(readme.toolServer) })).toBe('REDIRECT');
  }, 180_000);

  /** Developer API → Create RevenueCat key, as the README says: the key is shown once. */
  async function mintOnDeveloperApiPage(platform: 'web' | 'ios' | 'android'): Promise<string> {
    await page.goto(`${dashboard}/settings/developer-api`);
    if (new URL(page.url()).pathname === '/login') {
      // Run on its own (`-t`), this test is the first to need the person signed in.
      await logIn();
      await page.waitForURL((u) => u.pathname !== '/login');
      await page.goto(`${dashboard}/settings/developer-api`);
    }
    await page.getByLabel('Platform').selectOption(platform);
    await page.getByLabel('Mode').selectOption('test');
    await page.getByRole('button', { name: 'Create RevenueCat key' }).click();
    await page.waitForURL(`${dashboard}/settings/developer-api`);
    return page.getByLabel('Key for RevenueCat’s SDK', { exact: true }).inputValue();
  }

  it('RevenueCat’s web SDK on the README’s proxyURL: offerings, customer info before and after a psp_a checkout, identifyUser and changeUser', async () => {
    keys.web = await mintOnDeveloperApiPage('web');
    expect(keys.web).toMatch(/^rcb_sb_/);
    const secretKey = bannerField(stack.banner, 'Secret key')!;
    const publishable = bannerField(stack.banner, 'Publishable key')!;

    // Offerings: the demo's published paywall, one package per product, priced from our pricing rows.
    const anon = Purchases.generateRevenueCatAnonymousAppUserId();
    const offerings = await stockPurchases(readme.proxyURL, keys.web, anon).getOfferings();
    expect(offerings.current?.identifier).toBe('default');
    const listed = await call(`${api}/v1`, '/products', secretKey);
    const usd = async (sku: string) => {
      const id = (listed.body.data as { id: string; sku: string }[]).find((p) => p.sku === sku)!.id;
      const product = await call(`${api}/v1`, `/products/${id}`, secretKey);
      return (product.body.pricing as { country: string; amount_minor: number }[]).find((p) => p.country === 'US')!
        .amount_minor;
    };
    expect(
      offerings.current!.availablePackages.map((p) => [
        p.identifier,
        p.webBillingProduct.identifier,
        p.webBillingProduct.price.amountMicros,
        p.webBillingProduct.price.currency,
      ]),
    ).toEqual([
      ['$rc_monthly', 'premium_monthly', (await usd('premium_monthly')) * 10_000, 'USD'],
      ['$rc_annual', 'premium_annual', (await usd('premium_annual')) * 10_000, 'USD'],
    ]);

    // Before: the anonymous app user has nothing.
    expect(
      Object.keys((await stockPurchases(readme.proxyURL, keys.web, anon).getCustomerInfo()).entitlements.all),
    ).toEqual([]);

    // A psp_a checkout through the started emulator, as our SDK opens it: the demo's test payment link (there once
    // npm start's background sync has run) with the app user as client_reference_id; Pay on the hosted page.
    const link = await until(
      'the demo sellable at psp_a',
      () => call(`${api}/v1/sdk`, '/checkout?plan_id=premium_monthly', publishable),
      (r) => r.status === 200,
      240_000,
    );
    expect(link.body.provider).toBe('psp_a');
    const checkout = new URL(link.body.url);
    checkout.searchParams.set('client_reference_id', anon);
    const tab = await browser.newPage();
    await tab.goto(checkout.href);
    expect(new URL(tab.url()).origin).toBe(`http://127.0.0.1:${ports.PSP_A_EMULATOR_PORT}`);
    await tab.click('#pay');
    await tab.waitForSelector('#paid', { timeout: 15_000 });
    await tab.close();

    // Ours, once the workflow has written it (provisional access counts before; its expiry is not the period's).
    const ours = await until(
      'the paid entitlement on /v1',
      () => call(`${api}/v1/sdk`, `/subscribers/${encodeURIComponent(anon)}`, publishable),
      (r) =>
        r.status === 200 &&
        (r.body.entitlements as { source: string; is_active: boolean }[]).some(
          (e) => e.source === 'paid' && e.is_active,
        ),
      120_000,
    );
    const paid = (ours.body.entitlements as { source: string; provider: string; expires_at: string }[]).find(
      (e) => e.source === 'paid',
    )!;
    expect(paid.provider).toBe('psp_a');

    // After: a fresh SDK instance (the SDK caches customer info) sees it active, with our expiry.
    const info = await stockPurchases(readme.proxyURL, keys.web, anon).getCustomerInfo();
    expect(Object.keys(info.entitlements.active)).toEqual(['premium']);
    expect(info.entitlements.active.premium).toMatchObject({
      isActive: true,
      productIdentifier: 'premium_monthly',
      store: 'stripe',
      isSandbox: true,
    });
    expect(info.entitlements.active.premium.expirationDate?.toISOString()).toBe(
      new Date(paid.expires_at).toISOString(),
    );
    expect(info.originalAppUserId).toBe(anon);

    // logIn from the anonymous id that bought: an alias, the purchase is the identified person's.
    const purchases = stockPurchases(readme.proxyURL, keys.web, anon);
    const person = `rc-person-${Date.now()}`;
    const identified = await purchases.identifyUser(person);
    expect(purchases.getAppUserId()).toBe(person);
    expect(Object.keys(identified.customerInfo.entitlements.active)).toEqual(['premium']);
    const ourPerson = await call(`${api}/v1/sdk`, `/subscribers/${person}`, publishable);
    expect(ourPerson.body.is_premium).toBe(true);
    // changeUser to someone else: their own (empty) customer info; and back.
    const other = await purchases.changeUser(`rc-other-${Date.now()}`);
    expect(Object.keys(other.entitlements.all)).toEqual([]);
    const backAgain = await purchases.changeUser(person);
    expect(Object.keys(backAgain.entitlements.active)).toEqual(['premium']);
    expect(backAgain.entitlements.active.premium.expirationDate?.toISOString()).toBe(
      new Date(paid.expires_at).toISOString(),
    );
  }, 420_000);

  it('the iOS and Android SDKs’ receipt requests through the started store emulators, with keys from the Developer API page', async () => {
    keys.ios = await mintOnDeveloperApiPage('ios');
    keys.android = await mintOnDeveloperApiPage('android');
    expect([keys.ios, keys.android]).toEqual([expect.stringMatching(/^appl_/), expect.stringMatching(/^goog_/)]);
    const publishable = bannerField(stack.banner, 'Publishable key')!;
    const ours = (user: string) => call(`${api}/v1/sdk`, `/subscribers/${user}`, publishable);
    const control = (provider: string) =>
      controlFor(() => `http://127.0.0.1:${ports[`${provider.toUpperCase()}_EMULATOR_PORT`]}`, { strict: true });

    // Android: a Play purchase of the demo's monthly product (its Play id), the token posted as purchases-android does.
    const android = `rc-android-${Date.now()}`;
    const play = await control('store_android')<{ purchase_token: string; base_plan_id: string }>(
      'POST',
      '/sandbox-purchase',
      { product_id: 'premium-monthly', app_user_id: android },
    );
    const r = await postReceipt(
      readme.proxyURL,
      keys.android,
      androidReceiptBody(play.purchase_token, android, 'premium-monthly', play.base_plan_id),
      'android',
    );
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const premium = r.body.subscriber.entitlements.premium;
    expect(premium).toMatchObject({ product_identifier: 'premium-monthly' });
    expect(r.body.subscriber.subscriptions['premium-monthly']).toMatchObject({ store: 'play_store', is_sandbox: true });
    const androidOurs = await ours(android);
    expect(androidOurs.body.is_premium).toBe(true);
    expect(androidOurs.body.entitlements[0].expires_at).toBe(premium.expires_date);
    // The same token for someone else is RevenueCat's 7102; one Play never issued, 7103.
    const thief = await postReceipt(
      readme.proxyURL,
      keys.android,
      androidReceiptBody(play.purchase_token, `${android}-thief`, 'premium-monthly', play.base_plan_id),
      'android',
    );
    expect([thief.status, thief.body.code]).toEqual([409, RC_ERROR.cannotTransferPurchase]);
    const forged = await postReceipt(
      readme.proxyURL,
      keys.android,
      androidReceiptBody('forged-token-play-never-issued', `${android}-f`, 'premium-monthly'),
      'android',
    );
    expect(forged.body.code).toBe(RC_ERROR.invalidReceiptToken);

    // iOS: a StoreKit 2 transaction of the demo's monthly product (its App Store id), its jwsRepresentation posted.
    const ios = `rc-ios-${Date.now()}`;
    const appStore = await control('store_ios')<{ signed_transaction: string }>('POST', '/sandbox-purchase', {
      product_id: 'com.demo.premium.monthly',
      app_user_id: ios,
    });
    const i = await postReceipt(
      readme.proxyURL,
      keys.ios,
      iosReceiptBody(appStore.signed_transaction, ios, 'com.demo.premium.monthly'),
      'iOS',
    );
    expect(i.status, JSON.stringify(i.body)).toBe(200);
    expect(i.body.subscriber.entitlements.premium.product_identifier).toBe('com.demo.premium.monthly');
    expect(i.body.subscriber.subscriptions['com.demo.premium.monthly']).toMatchObject({
      store: 'app_store',
      is_sandbox: true,
    });
    expect((await ours(ios)).body.is_premium).toBe(true);
    // StoreKit 1: the device's app receipt (the started emulator's) for another purchase is resolved
    // through the App Store; bytes that are no receipt are 7103; the banner's secret key is no key here (7225).
    const sk1User = `rc-ios-sk1-${Date.now()}`;
    const sk1Purchase = await control('store_ios')<{ transaction_id: string }>('POST', '/sandbox-purchase', {
      product_id: 'com.demo.premium.monthly',
      app_user_id: sk1User,
    });
    const { receipt } = await control('store_ios')<{ receipt: string }>('POST', '/app-receipt', {
      transaction_id: sk1Purchase.transaction_id,
    });
    const sk1 = await postReceipt(
      readme.proxyURL,
      keys.ios,
      iosReceiptBody(receipt, sk1User, 'com.demo.premium.monthly'),
      'iOS',
    );
    expect(sk1.status, JSON.stringify(sk1.body)).toBe(200);
    expect(sk1.body.subscriber.entitlements.premium.product_identifier).toBe('com.demo.premium.monthly');
    expect((await ours(sk1User)).body.is_premium).toBe(true);
    const garbage = await postReceipt(
      readme.proxyURL,
      keys.ios,
      iosReceiptBody(Buffer.from('no app receipt').toString('base64'), `${ios}-sk1`),
      'iOS',
    );
    expect([garbage.status, garbage.body.code]).toEqual([400, RC_ERROR.invalidReceiptToken]);
    const secret = await postReceipt(
      readme.proxyURL,
      bannerField(stack.banner, 'Secret key')!,
      iosReceiptBody(appStore.signed_transaction, ios, 'com.demo.premium.monthly'),
      'iOS',
    );
    expect([secret.status, secret.body.code]).toEqual([401, RC_ERROR.invalidApiKey]);
  }, 180_000);

  it('SIGINT to the orchestrator alone stops every child of the second start', async () => {
    await stopsEverything(stack, 'SIGINT');
  }, 120_000);
});
