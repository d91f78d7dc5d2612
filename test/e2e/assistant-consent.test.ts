import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import { rolesWithin } from '../../domain/roles';
import { hashPassword } from '../../runtime/passwords';
import { newTenant, testServices } from '../helpers/api';
import { startSignInApps } from '../helpers/sign-in-apps';
import { testDb } from '../helpers/db';
import { makeProduct } from '../helpers/factories';
import { Assistant, finishSignIn, loopbackRedirect, startSignIn, toolText, toolsList } from '../helpers/mcp-assistant';
import { expectAccessible, launchBrowser, screenshot, uniqueEmail } from './helpers/browser';

const PASSWORD = 'a developer’s own password';

/**
 * Connecting an assistant as a person does it (docs/assistant-sign-in.md): the official MCP
 * client's own OAuth flow (discovery from the tool server's 401, registration, PKCE, the token
 * exchange) against the dashboard and the tool server, and the person's side in Chromium — the
 * authorization URL opened signed out, the log-in, the consent page (who asks, where the answer
 * goes, the account, the role ceiling), narrowing the role and choosing "writes wait for
 * approval", Approve, the redirect back to the assistant's loopback address; then a tool call,
 * the audit trail naming "assistant <client> on behalf of <person>", Disconnect on the
 * Assistants page; and a second sign-in the person denies (`access_denied`).
 */
describe('an assistant connected through the consent page in a browser', () => {
  const closers: (() => Promise<void>)[] = [];
  let dashboardRoot = '';
  let toolsRoot = '';
  let browser: Browser;
  let services: ReturnType<typeof testServices>;
  let page: Page;
  let tenant: { tenant_id: string; name: string };
  const email = uniqueEmail('assistant-dev');

  beforeAll(async () => {
    ({ services, dashboardRoot, toolsRoot } = await startSignInApps(closers));
    const t = await newTenant('assistant-consent');
    tenant = { tenant_id: t.tenant_id, name: (await testDb()('tenants').where({ id: t.tenant_id }).first()).name };
    await makeProduct(t.tenant_id, { name: 'Seen By The Assistant' });
    await testDb()('dashboard_users').insert({
      tenant_id: t.tenant_id,
      email,
      role: 'developer',
      password_hash: await hashPassword(PASSWORD),
    });
    browser = await launchBrowser();
    page = await browser.newPage();
  });
  afterAll(async () => {
    await browser?.close();
    for (const c of closers) await c();
    await services?.temporal?.connection.close();
  });

  async function redirectTarget() {
    const back = await loopbackRedirect();
    closers.push(back.close);
    return back;
  }

  /** The official client's sign-in up to the authorization URL, which is the dashboard's. */
  async function signInUrl(a: Assistant) {
    const url = await startSignIn(a, toolsRoot);
    expect(url.origin).toBe(dashboardRoot);
    return url;
  }

  it('signed out, the person logs in, sees who asks and their ceiling, narrows the role, approves; the assistant works within it and is disconnected on the Assistants page', async () => {
    const back = await redirectTarget();
    const a = new Assistant('Browser Assistant', back.redirect);
    const authorizationUrl = await signInUrl(a);

    // Signed out: the dashboard sends the person to log in first, then back to the consent page.
    await page.goto(authorizationUrl.href);
    await page.waitForURL(/\/login\?next=/);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(/\/assistants\/consent\//);

    const facts = await page.locator('dl').innerText();
    expect(facts).toContain('Browser Assistant');
    expect(facts).toContain(new URL(back.redirect).host);
    expect(facts).toContain(tenant.name);
    expect(facts).toContain(`${email} (developer)`);
    // The ceiling: a developer may give their own role or a narrower one, nothing more.
    const offered = await page
      .locator('#assistant-role option')
      .evaluateAll((os) => os.map((o) => o.getAttribute('value')));
    expect(offered).toEqual(rolesWithin('developer'));
    expect(offered).toEqual(['developer', 'viewer']);
    await expectAccessible(page, 'the consent page');
    await screenshot(page, 'assistant-consent');

    await page.getByLabel('What it may do').selectOption('viewer');
    await page.getByLabel(/Writes wait for approval/).check();
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.waitForURL(`${back.redirect}?**`);
    const arrived = back.arrivals.at(-1)!;
    expect(arrived.searchParams.get('error')).toBeNull();
    const code = arrived.searchParams.get('code')!;
    expect(code).toBeTruthy();

    // The client exchanges the code itself and calls tools as "the assistant on behalf of the person".
    const client = await finishSignIn(a, toolsRoot, code);
    const products = await client.callTool({ name: 'billing_products', arguments: {} });
    expect(products.isError, toolText(products)).toBeFalsy();
    expect(toolText(products)).toContain('Seen By The Assistant');
    // Narrowed to viewer: a write the developer could make is refused to their assistant, and nothing is written.
    const write = await client.callTool({
      name: 'billing_create_product',
      arguments: { sku: 'by_browser', name: 'No' },
    });
    expect(write.isError).toBe(true);
    expect(toolText(write)).toMatch(/^insufficient_scope/);
    expect(await testDb()('products').where({ tenant_id: tenant.tenant_id, sku: 'by_browser' })).toHaveLength(0);
    await client.close();

    // The audit trail names both: the assistant and the person it acted for.
    await page.goto(`${dashboardRoot}/audit?actor_type=assistant`);
    const trail = await page.locator('table').innerText();
    expect(trail).toContain(`assistant Browser Assistant on behalf of ${email}`);
    await page.goto(`${dashboardRoot}/audit?action=assistants.connect`);
    expect(await page.locator('table').innerText()).toContain(email);

    // The Assistants page lists it as chosen; Disconnect ends its token at once.
    await page.goto(`${dashboardRoot}/settings/assistants`);
    const row = page.getByRole('row', { name: /Browser Assistant/ });
    await expect(row.innerText()).resolves.toMatch(/viewer\s+Writes wait for approval/);
    expect((await toolsList(toolsRoot, a.saved!.access_token)).status).toBe(200);
    await row.getByRole('button', { name: 'Disconnect Browser Assistant' }).click();
    await page.waitForURL('**/settings/assistants?revoked=1');
    await expect(page.getByRole('row', { name: /Browser Assistant/ }).innerText()).resolves.toContain('Disconnected');
    const refused = await toolsList(toolsRoot, a.saved!.access_token);
    expect(refused.status).toBe(401);
    // Its codes and tokens, and the authorization server's grant itself, are gone too.
    const { grant_id } = await testDb()('assistant_grants').where({ tenant_id: tenant.tenant_id }).first();
    const grantHash = crypto.createHash('sha256').update(grant_id).digest('hex');
    expect(await testDb()('oauth_records').where({ grant_id }).orWhere({ model: 'Grant', id_hash: grantHash })).toEqual(
      [],
    );
    expect(refused.headers.get('www-authenticate')).toContain('resource_metadata=');
    const [revoke] = await testDb()('audit_entries').where({
      tenant_id: tenant.tenant_id,
      action: 'assistants.revoke',
    });
    expect([revoke.actor_type, revoke.outcome, revoke.detail.name]).toEqual(['user', 'ok', 'Browser Assistant']);
  });

  it('a second assistant the signed-in person denies gets access_denied and no token', async () => {
    const back = await redirectTarget();
    const a = new Assistant('Unwanted Assistant', back.redirect);
    const authorizationUrl = await signInUrl(a);
    await page.goto(authorizationUrl.href);
    await page.waitForURL(/\/assistants\/consent\//);
    await expect(page.locator('dl').innerText()).resolves.toContain('Unwanted Assistant');
    await page.getByRole('button', { name: 'Deny' }).click();
    await page.waitForURL(`${back.redirect}?**`);
    const arrived = back.arrivals.at(-1)!;
    expect(arrived.searchParams.get('error')).toBe('access_denied');
    expect(arrived.searchParams.get('code')).toBeNull();
    // Nothing to exchange: the client still has no token and would have to ask again.
    expect(a.saved).toBeUndefined();
    expect(await auth(a, { serverUrl: new URL(`${toolsRoot}/`) })).toBe('REDIRECT');
    expect(
      await testDb()('assistant_grants').where({ tenant_id: tenant.tenant_id, client_name: 'Unwanted Assistant' }),
    ).toHaveLength(0);
    const [denied] = await testDb()('audit_entries').where({ tenant_id: tenant.tenant_id, action: 'assistants.deny' });
    expect([denied.actor_type, denied.outcome, denied.detail.name]).toEqual(['user', 'ok', 'Unwanted Assistant']);
  });
});
