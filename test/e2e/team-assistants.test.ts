import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import type { Role } from '../../domain/roles';
import { hashPassword } from '../../runtime/passwords';
import { newTenant, testServices } from '../helpers/api';
import { lateListener, startSignInApps } from '../helpers/sign-in-apps';
import { testDb } from '../helpers/db';
import { Assistant } from '../helpers/mcp-assistant';
import { expectAccessible, launchBrowser, screenshot, uniqueEmail } from './helpers/browser';

const PASSWORD = 'a member’s own password';

/**
 * An owner disconnects a member's assistant (docs/assistant-sign-in.md, "The team's assistants"):
 * the member connects one with the official MCP client's own OAuth flow and the consent page in
 * Chromium; the owner, in another browser session, finds it on the Team page under the member's
 * name and disconnects it; the member's client is refused at once (401 with the metadata pointer,
 * from which the official client starts a new sign-in); the audit trail reads "<owner> disconnected
 * assistant <client> of <member>". Another tenant's owner never sees it on their Team page.
 */
describe('the Team page disconnects a member’s assistant', () => {
  const closers: (() => Promise<void>)[] = [];
  let dashboardRoot = '';
  let toolsRoot = '';
  let browser: Browser;
  let services: ReturnType<typeof testServices>;
  const sessions: BrowserContext[] = [];
  const people = {
    owner: uniqueEmail('team-owner'),
    member: uniqueEmail('team-member'),
    other: uniqueEmail('other-owner'),
  };

  const addPerson = async (tenantId: string, email: string, role: Role) =>
    testDb()('dashboard_users').insert({
      tenant_id: tenantId,
      email,
      role,
      password_hash: await hashPassword(PASSWORD),
    });

  /** A browser session of its own, signed in as `email`. */
  async function signedIn(email: string): Promise<Page> {
    const context = await browser.newContext();
    sessions.push(context);
    const page = await context.newPage();
    await page.goto(`${dashboardRoot}/login`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL('**/overview');
    return page;
  }

  beforeAll(async () => {
    ({ services, dashboardRoot, toolsRoot } = await startSignInApps(closers));
    const a = await newTenant('team-assistants-a');
    await addPerson(a.tenant_id, people.owner, 'owner');
    await addPerson(a.tenant_id, people.member, 'developer');
    await addPerson((await newTenant('team-assistants-b')).tenant_id, people.other, 'owner');
    browser = await launchBrowser();
  });
  afterAll(async () => {
    for (const s of sessions) await s.close();
    await browser?.close();
    for (const c of closers) await c();
    await services?.temporal?.connection.close();
  });

  it('the member connects an assistant; the owner disconnects it on the Team page; the member’s client is refused at once', async () => {
    // The member's assistant signs in: the official client, its loopback redirect, the consent page.
    const arrivals: URL[] = [];
    const back = await lateListener(closers, (req, res) => {
      const url = new URL(req.url!, 'http://127.0.0.1');
      if (url.pathname === '/callback') arrivals.push(url);
      res.end('You may close this window.');
    });
    const assistant = new Assistant('Member Assistant', `${back.url}/callback`);
    const transport = () => new StreamableHTTPClientTransport(new URL(`${toolsRoot}/`), { authProvider: assistant });
    await expect(new Client({ name: assistant.name, version: '1.0.0' }).connect(transport())).rejects.toBeInstanceOf(
      UnauthorizedError,
    );
    const memberPage = await signedIn(people.member);
    await memberPage.goto(assistant.authorizationUrl!.href);
    await memberPage.getByRole('button', { name: 'Approve' }).click();
    await memberPage.waitForURL(`${back.url}/callback?**`);
    await transport().finishAuth(arrivals.at(-1)!.searchParams.get('code')!);
    const client = new Client({ name: assistant.name, version: '1.0.0' });
    await client.connect(transport());
    const listed = await client.callTool({ name: 'billing_products', arguments: {} });
    expect(listed.isError).toBeFalsy();
    await client.close();
    const firstSignIn = assistant.authorizationUrl!.href;

    // Another tenant's owner: their Team page lists no assistant of this tenant.
    const otherPage = await signedIn(people.other);
    await otherPage.goto(`${dashboardRoot}/settings/team`);
    await expect(otherPage.locator('main').innerText()).resolves.toContain('No member has an assistant connected.');

    // The owner finds it under the member's name and disconnects it.
    const ownerPage = await signedIn(people.owner);
    await ownerPage.goto(`${dashboardRoot}/settings/team`);
    const row = ownerPage.getByRole('row').filter({ hasText: people.member }).filter({ hasText: 'Member Assistant' });
    await expect(row.innerText()).resolves.toContain(people.member);
    await expectAccessible(ownerPage, 'the Team page with members’ assistants');
    await screenshot(ownerPage, 'team-assistants');
    await row.getByRole('button', { name: `Disconnect Member Assistant of ${people.member}` }).click();
    await expect(ownerPage.getByRole('status').innerText()).resolves.toContain(
      'Member Assistant was disconnected: its access ended at once.',
    );
    await expect(ownerPage.locator('main').innerText()).resolves.toContain('No member has an assistant connected.');

    // The member's client: its token is refused, and from the 401's pointer the official client
    // finds the authorization server again and asks the person anew (its refresh token is gone too).
    const revokedToken = assistant.saved!.access_token;
    const raw = await fetch(`${toolsRoot}/`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${revokedToken}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(raw.status).toBe(401);
    expect(raw.headers.get('www-authenticate')).toContain(
      `resource_metadata="${toolsRoot}/.well-known/oauth-protected-resource"`,
    );
    await expect(new Client({ name: assistant.name, version: '1.0.0' }).connect(transport())).rejects.toBeInstanceOf(
      UnauthorizedError,
    );
    expect(assistant.authorizationUrl!.origin).toBe(dashboardRoot);
    expect(assistant.authorizationUrl!.href).not.toBe(firstSignIn);
    // It dropped the refused tokens (the refresh token was deleted with the consent), kept its registration.
    expect(assistant.saved).toBeUndefined();
    expect(assistant.client?.client_id).toEqual(expect.any(String));

    // The member's own Assistants page shows it disconnected; the audit trail names all three.
    await memberPage.goto(`${dashboardRoot}/settings/assistants`);
    await expect(memberPage.getByRole('row', { name: /Member Assistant/ }).innerText()).resolves.toContain(
      'Disconnected',
    );
    await ownerPage.goto(`${dashboardRoot}/audit?action=assistants.disconnect`);
    await expect(ownerPage.locator('table').innerText()).resolves.toContain(
      `${people.owner} disconnected assistant Member Assistant of ${people.member}`,
    );
  });
});
