import crypto from 'node:crypto';
import type http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { createDashboardApp, createToolsApp } from '../../api/apps';
import { SESSION_COOKIE } from '../../api/dashboard/session';
import { createSession } from '../../db/dashboard-users';
import { deleteUnusedOAuthClients } from '../../db/oauth-records';
import { createLogger } from '../../runtime/logger';
import { listen, newTenant, testServices } from '../helpers/api';
import { testDb } from '../helpers/db';
import { makeProduct } from '../helpers/factories';
import { Assistant, connectedClient, finishSignIn, startSignIn, toolText } from '../helpers/mcp-assistant';

/**
 * An assistant whose registration the cleanup deleted (docs/assistant-sign-in.md, "Expired
 * records") signs in again with nobody editing anything: the official MCP client presents its
 * deleted `client_id` with its last refresh token, the token endpoint answers `invalid_client`
 * (401), and the client itself drops what it holds (`invalidateCredentials('all')`), registers
 * anew and asks the person again; after their consent it calls tools as before. One that holds no
 * token cannot be told (it goes straight to the browser): the page says what its person does.
 */
describe('an assistant whose registration was cleaned up signs in again', () => {
  const log = createLogger('silent');
  const closers: (() => Promise<void>)[] = [];
  let dashboardRoot = '';
  let toolsRoot = '';

  async function listener() {
    let handler: http.RequestListener = (_req, res) => res.end();
    const l = await listen((req, res) => handler(req, res));
    closers.push(l.close);
    return { url: l.url, set: (h: http.RequestListener) => (handler = h) };
  }

  beforeAll(async () => {
    const [dashboard, tools] = [await listener(), await listener()];
    dashboardRoot = dashboard.url;
    toolsRoot = tools.url;
    const services = testServices({
      config: { ...testServices().config, publicDashboardUrl: dashboard.url, publicToolsUrl: tools.url },
    });
    dashboard.set(createDashboardApp(services, log).callback());
    tools.set(createToolsApp(services, log).callback());
  });
  afterAll(async () => {
    for (const c of closers) await c();
  });

  async function owner(tenantId: string) {
    const [user] = await testDb()('dashboard_users')
      .insert({
        tenant_id: tenantId,
        email: `owner-${crypto.randomUUID()}@example.test`,
        role: 'owner',
        password_hash: 'unused: signed in by cookie',
      })
      .returning(['id', 'tenant_id', 'email', 'role']);
    return `${SESSION_COOKIE}=${(await createSession(testDb(), user)).token}`;
  }

  /** The person approves in their browser: the authorization URL, the consent form, the redirects back. Answers the code. */
  async function approve(cookie: string, authorizationUrl: URL): Promise<string> {
    const jar = new Map(cookie.split('; ').map((c) => c.split('=') as [string, string]));
    const header = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const go = async (url: string, init: RequestInit = {}) => {
      const res = await fetch(url, { ...init, redirect: 'manual', headers: { ...init.headers, cookie: header() } });
      for (const c of res.headers.getSetCookie()) {
        const [pair] = c.split(';');
        const i = pair.indexOf('=');
        if (pair.slice(i + 1) === '' || /expires=Thu, 01 Jan 1970/i.test(c)) jar.delete(pair.slice(0, i));
        else jar.set(pair.slice(0, i), pair.slice(i + 1));
      }
      return res;
    };
    let res = await go(authorizationUrl.href);
    expect(res.status).toBe(303);
    res = await go(new URL(res.headers.get('location')!, dashboardRoot).href);
    expect(res.status).toBe(200);
    const page = await res.text();
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page)![1];
    const action = /<form method="post" action="(\/assistants\/consent\/[^"]+)"/.exec(page)![1];
    res = await go(new URL(action, dashboardRoot).href, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: dashboardRoot },
      body: new URLSearchParams({ _csrf: csrf, decision: 'approve' }),
    });
    let next = new URL(res.headers.get('location')!, dashboardRoot);
    while (next.origin === dashboardRoot) {
      res = await go(next.href);
      expect(res.status, await res.clone().text()).toBeGreaterThanOrEqual(300);
      next = new URL(res.headers.get('location')!, dashboardRoot);
    }
    const code = next.searchParams.get('code');
    expect(code, next.href).toBeTruthy();
    return code!;
  }

  /** The client a record names, as the cleanup reads it (db/oauth-records.ts `CLIENT_REF`). */
  const naming = (clientId: string) =>
    testDb()('oauth_records').whereRaw(`coalesce(payload->>'clientId', payload->'params'->>'client_id') = ?`, [
      clientId,
    ]);
  const registration = (clientId: string) =>
    testDb()('oauth_records').where({ model: 'Client' }).whereRaw(`payload->>'client_id' = ?`, [clientId]);

  /**
   * Thirty-one days unused, as the rows would read then: everything naming the registration (tokens,
   * the grant, a pending sign-in) past its expiry, the registration last used 31 days ago; then the
   * cleanup's own function, in the same transaction, so no other file's cleanup sees the moved clock.
   * Answers once the registration is gone.
   */
  async function unusedFor31Days(clientId: string) {
    await testDb().transaction(async (trx) => {
      await naming(clientId)
        .transacting(trx)
        .whereNot({ model: 'Client' })
        .update({ expires_at: trx.raw(`now() - interval '1 day'`) });
      await registration(clientId)
        .transacting(trx)
        .update({ created_at: trx.raw(`now() - interval '60 days'`), used_at: trx.raw(`now() - interval '31 days'`) });
      await deleteUnusedOAuthClients(trx, 10_000);
    });
    expect(await registration(clientId)).toEqual([]);
  }

  it('the client registers again by itself on invalid_client, and is signed in after the consent', async () => {
    const t = await newTenant('assistant-re-registers');
    await makeProduct(t.tenant_id, { name: 'Gold' });
    const cookie = await owner(t.tenant_id);
    const a = new Assistant('Returning Assistant');

    // Registered, signed in, a tool called.
    await startSignIn(a, toolsRoot);
    let client = await finishSignIn(a, toolsRoot, await approve(cookie, a.authorizationUrl!));
    expect(toolText(await client.callTool({ name: 'billing_products', arguments: {} }))).toContain('Gold');
    await client.close();
    const first = a.client!.client_id;
    const { refresh_token: lastRefresh } = a.saved!;
    expect(lastRefresh).toBeTruthy();

    await unusedFor31Days(first);

    // What the server says to the deleted registration's refresh: invalid_client, 401 (RFC 6749
    // 5.2), the answer the client's `auth()` treats as "register again".
    const as = await (await fetch(`${dashboardRoot}/.well-known/oauth-authorization-server`)).json();
    const refused = await fetch(as.token_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: lastRefresh!,
        client_id: first,
        resource: `${toolsRoot}/`,
      }),
    });
    expect(refused.status).toBe(401);
    expect((await refused.json()).error).toBe('invalid_client');

    // The assistant's next use: the stock client refreshes, is told invalid_client, drops what it
    // holds, registers again and sends the person to consent (its connect ends unauthorized).
    a.authorizationUrl = undefined;
    await expect(connectedClient(a, toolsRoot)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(a.saved).toBeUndefined();
    expect(a.client?.client_id).toBeTruthy();
    expect(a.client!.client_id).not.toBe(first);
    expect(await registration(a.client!.client_id)).toHaveLength(1);
    expect(a.authorizationUrl!.searchParams.get('client_id')).toBe(a.client!.client_id);

    // The person approves again; the assistant is signed in and calls tools.
    client = await finishSignIn(a, toolsRoot, await approve(cookie, a.authorizationUrl!));
    expect(toolText(await client.callTool({ name: 'billing_products', arguments: {} }))).toContain('Gold');
    await client.close();
  });

  it('one that holds no token never reaches the token endpoint: the person is told, on the page it opens, to add it again', async () => {
    // A sign-in started and left (the registration used, no code exchanged), then 31 days unused.
    const a = new Assistant('Abandoned Assistant');
    await startSignIn(a, toolsRoot);
    expect((await fetch(a.authorizationUrl!.href, { redirect: 'manual' })).status).toBe(303);
    const first = a.client!.client_id;
    await unusedFor31Days(first);

    // With nothing to refresh the stock client goes straight to the person's browser with the id it
    // holds: no answer of ours reaches it, so it cannot know to register again.
    a.authorizationUrl = undefined;
    await expect(connectedClient(a, toolsRoot)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(a.client!.client_id).toBe(first);
    const page = await fetch(a.authorizationUrl!.href, { redirect: 'manual' });
    expect(page.status).toBe(400);
    expect(page.headers.get('location')).toBeNull();
    const body = await page.text();
    expect(body).toContain('This assistant is no longer registered here');
    expect(body).toContain('remove this connection and add it again');
    expect(body).not.toContain(first);

    // What the person does in the assistant (forget the connection) is what invalid_client makes the
    // client do by itself: it registers anew and is signed in after the consent.
    a.invalidateCredentials('all');
    const cookie = await owner((await newTenant('assistant-added-again')).tenant_id);
    await startSignIn(a, toolsRoot);
    expect(a.client!.client_id).not.toBe(first);
    const client = await finishSignIn(a, toolsRoot, await approve(cookie, a.authorizationUrl!));
    expect((await client.callTool({ name: 'billing_products', arguments: {} })).isError).toBeFalsy();
    await client.close();
  });
});
