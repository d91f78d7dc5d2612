import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import { SESSION_COOKIE } from '../../api/dashboard/session';
import { createSession } from '../../db/dashboard-users';
import type { Role } from '../../domain/roles';
import { executeOperation } from '../../operations/execute';
import { removeTeamMember } from '../../operations/team/remove';
import { changeMemberRole } from '../../operations/team/change-role';
import { connectAssistant } from '../../operations/assistants/connect';
import { listAssistants } from '../../operations/assistants/list';
import { revokeAssistant } from '../../operations/assistants/revoke';
import { approveChange } from '../../operations';
import { startTestWorker } from '../helpers/temporal';
import { createLogger } from '../../runtime/logger';
import { newTenant, refill, testServices } from '../helpers/api';
import { startSignInApps } from '../helpers/sign-in-apps';
import { testDb } from '../helpers/db';
import { makeProduct } from '../helpers/factories';
import { Assistant, connectedClient, finishSignIn, startSignIn, toolText, toolsList } from '../helpers/mcp-assistant';

/**
 * Assistants sign in (docs/assistant-sign-in.md), driven by the official MCP client's own OAuth
 * flow (`auth()`, `StreamableHTTPClientTransport` with an `OAuthClientProvider`, `finishAuth`):
 * discovery from the tool server's 401, dynamic registration, PKCE, the consent form posted by a
 * signed-in person (their session cookie, as the browser sends it), the token exchange, tool
 * calls, refresh rotation, revocation, a denial, the REST API refusing the token, a viewer's
 * assistant that cannot write, a removed member's assistant stopping at once, and tenancy.
 */
describe('assistants sign in (MCP authorization)', () => {
  const log = createLogger('silent');
  let dashboardRoot = '';
  let toolsRoot = '';
  let apiRoot = '';
  const closers: (() => Promise<void>)[] = [];
  let services: ReturnType<typeof testServices>;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;

  beforeAll(async () => {
    // A worker for the writes held for approval (their workflow).
    worker = await startTestWorker();
    ({ services, dashboardRoot, toolsRoot, apiRoot } = await startSignInApps(closers, {
      api: true,
      overrides: { config: worker.config, vault: worker.vault },
    }));
  });
  afterAll(async () => {
    for (const c of closers) await c();
    await worker?.stop();
  });

  interface Person {
    id: string;
    tenantId: string;
    cookie: string;
  }

  async function person(tenantId: string, role: Role): Promise<Person> {
    const [user] = await testDb()('dashboard_users')
      .insert({
        tenant_id: tenantId,
        email: `${role}-${crypto.randomUUID()}@example.test`,
        role,
        password_hash: 'unused: signed in by cookie',
      })
      .returning(['id', 'tenant_id', 'email', 'role']);
    const session = await createSession(testDb(), user);
    return { id: user.id, tenantId, cookie: `${SESSION_COOKIE}=${session.token}` };
  }

  /** A browser's cookie jar, enough for one sign-in: name → value. */
  class Jar {
    readonly cookies = new Map<string, string>();
    constructor(first: string) {
      const [k, v] = first.split('=');
      this.cookies.set(k, v);
    }
    take(res: Response) {
      for (const c of res.headers.getSetCookie()) {
        const [pair] = c.split(';');
        const i = pair.indexOf('=');
        const value = pair.slice(i + 1);
        if (value === '' || /expires=Thu, 01 Jan 1970/i.test(c)) this.cookies.delete(pair.slice(0, i));
        else this.cookies.set(pair.slice(0, i), value);
      }
    }
    get header() {
      return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    }
  }

  const get = async (jar: Jar, url: string) => {
    const res = await fetch(url, { headers: { cookie: jar.header }, redirect: 'manual' });
    jar.take(res);
    return res;
  };

  /**
   * The person's side, as a browser does it: open the authorization URL (the dashboard sends them
   * to its consent page), post the one form with `decision`, follow the redirects back to the
   * assistant's redirect URI. Answers that final URL.
   */
  async function consent(
    who: Person,
    authorizationUrl: URL,
    decision: 'approve' | 'deny',
    extra: Record<string, string> = {},
  ): Promise<URL> {
    const jar = new Jar(who.cookie);
    let res = await get(jar, authorizationUrl.href);
    expect(res.status).toBe(303);
    const consentUrl = new URL(res.headers.get('location')!, dashboardRoot);
    expect(consentUrl.pathname).toMatch(/^\/assistants\/consent\//);
    res = await get(jar, consentUrl.href);
    expect(res.status).toBe(200);
    const page = await res.text();
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page)![1];
    const action = /<form method="post" action="(\/assistants\/consent\/[^"]+)"/.exec(page)![1];
    res = await fetch(new URL(action, dashboardRoot), {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: jar.header, 'content-type': 'application/x-www-form-urlencoded', origin: dashboardRoot },
      body: new URLSearchParams({ _csrf: csrf, decision, ...extra }),
    });
    jar.take(res);
    expect(res.status).toBe(303);
    let next = new URL(res.headers.get('location')!, dashboardRoot);
    while (next.origin === dashboardRoot) {
      res = await get(jar, next.href);
      expect(res.status, await res.clone().text()).toBeGreaterThanOrEqual(300);
      next = new URL(res.headers.get('location')!, dashboardRoot);
    }
    return next;
  }

  async function consentPage(who: Person, a: Assistant) {
    const jar = new Jar(who.cookie);
    const res = await get(jar, a.authorizationUrl!.href);
    return (await get(jar, new URL(res.headers.get('location')!, dashboardRoot).href)).text();
  }

  /** Signs an assistant in for a person and answers a connected official client. */
  async function signIn(who: Person, a: Assistant, extra: Record<string, string> = {}): Promise<Client> {
    if (!a.authorizationUrl) await startSignIn(a, toolsRoot);
    const back = await consent(who, a.authorizationUrl!, 'approve', extra);
    expect(back.href.startsWith(a.redirect)).toBe(true);
    const code = back.searchParams.get('code')!;
    expect(code).toBeTruthy();
    return finishSignIn(a, toolsRoot, code);
  }

  const toolsPost = (token: string) => toolsList(toolsRoot, token);
  const text = toolText;

  it('publishes where to sign in: a 401 pointing at the protected-resource metadata, which names the dashboard as the authorization server', async () => {
    const res = await fetch(`${toolsRoot}/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    });
    expect(res.status).toBe(401);
    const header = res.headers.get('www-authenticate')!;
    expect(header).toMatch(/^Bearer /);
    expect(header).toContain(`resource_metadata="${toolsRoot}/.well-known/oauth-protected-resource"`);
    const body = await res.json();
    expect(body.error).toBe('invalid_api_key');

    const prm = await (await fetch(`${toolsRoot}/.well-known/oauth-protected-resource`)).json();
    expect(prm.resource).toBe(`${toolsRoot}/`);
    expect(prm.authorization_servers).toEqual([dashboardRoot]);

    const as = await (await fetch(`${dashboardRoot}/.well-known/oauth-authorization-server`)).json();
    expect(as.issuer).toBe(dashboardRoot);
    expect(as.code_challenge_methods_supported).toEqual(['S256']);
    expect(as.response_types_supported).toEqual(['code']);
    expect(as.grant_types_supported).toEqual(expect.arrayContaining(['authorization_code', 'refresh_token']));
    for (const k of ['authorization_endpoint', 'token_endpoint', 'registration_endpoint', 'revocation_endpoint'])
      expect(as[k], k).toMatch(new RegExp(`^${dashboardRoot}/`));
  });

  it('an owner approves: the official client registers, exchanges the code, calls tools; refresh rotates; revocation ends it with a 401', async () => {
    const t = await newTenant('assistant-owner');
    await makeProduct(t.tenant_id, { name: 'Gold' });
    const owner = await person(t.tenant_id, 'owner');
    const a = new Assistant('Test Assistant');
    await startSignIn(a, toolsRoot);
    // PKCE S256 and the resource indicator come from the client itself.
    expect(a.authorizationUrl!.searchParams.get('code_challenge_method')).toBe('S256');
    expect(a.authorizationUrl!.searchParams.get('resource')).toBe(`${toolsRoot}/`);
    const page = await consentPage(owner, a);
    expect(page).toContain('Test Assistant');
    expect(page).toContain(new URL(a.redirect).host);
    expect(page).toContain('assistant-owner');
    expect(page).toMatch(/name="decision" value="approve"/);
    expect(page).toMatch(/name="decision" value="deny"/);

    const client = await signIn(owner, a);
    const { tools } = await client.listTools();
    expect(tools.map((x) => x.name)).toContain('billing_products');
    const products = await client.callTool({ name: 'billing_products', arguments: {} });
    expect(products.isError).toBeFalsy();
    expect(text(products)).toContain('Gold');
    // A write runs as "assistant <client> on behalf of <person>", and its audit row names both.
    const created = await client.callTool({
      name: 'billing_create_product',
      arguments: { sku: 'assist_1', name: 'Made by an assistant' },
    });
    expect(created.isError, text(created)).toBeFalsy();
    const [row] = await testDb()('audit_entries').where({ tenant_id: t.tenant_id, action: 'products.create' });
    expect(row.actor_type).toBe('assistant');
    expect(row.detail).toMatchObject({ assistant: 'Test Assistant', on_behalf_of: owner.id, surface: 'tool' });

    // The code cannot be used twice (single-use), and the token is refused by the REST API.
    const access = a.saved!.access_token;
    const rest = await fetch(`${apiRoot}/v1/tenant`, { headers: { authorization: `Bearer ${access}` } });
    expect(rest.status).toBe(401);

    // Refresh rotates: a new pair, and the old refresh token no longer works.
    const firstRefresh = a.saved!.refresh_token!;
    expect(firstRefresh).toBeTruthy();
    expect(await auth(a, { serverUrl: new URL(`${toolsRoot}/`) })).toBe('AUTHORIZED');
    expect(a.saved!.refresh_token).toBeTruthy();
    expect(a.saved!.refresh_token).not.toBe(firstRefresh);
    expect(a.saved!.access_token).not.toBe(access);
    const again = await connectedClient(a, toolsRoot);
    expect((await again.callTool({ name: 'billing_products', arguments: {} })).isError).toBeFalsy();

    // The dashboard lists it with its last use; RFC 7009 revocation ends the token at once.
    const list = await (
      await fetch(`${dashboardRoot}/settings/assistants`, { headers: { cookie: owner.cookie } })
    ).text();
    expect(list).toContain('Test Assistant');
    const clientId = a.client!.client_id;
    const revoked = await fetch(`${dashboardRoot}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: a.saved!.access_token, client_id: clientId }),
    });
    expect(revoked.status).toBe(200);
    const after = await toolsPost(a.saved!.access_token);
    expect(after.status).toBe(401);
    expect(after.headers.get('www-authenticate')).toContain('resource_metadata=');
    await refill(t.tenant_id);
  });

  it('the person denies: the assistant gets access_denied and no token', async () => {
    const t = await newTenant('assistant-deny');
    const owner = await person(t.tenant_id, 'owner');
    const a = new Assistant('Denied Assistant');
    await startSignIn(a, toolsRoot);
    const back = await consent(owner, a.authorizationUrl!, 'deny');
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('code')).toBeNull();
    expect(await testDb()('assistant_grants').where({ tenant_id: t.tenant_id })).toHaveLength(0);
  });

  it("a viewer's assistant reads but cannot write; a developer cannot hand out more than their role; removing the member stops it at once", async () => {
    const t = await newTenant('assistant-viewer');
    const viewer = await person(t.tenant_id, 'viewer');
    const a = new Assistant('Viewer Assistant');
    const client = await signIn(viewer, a);
    expect((await client.callTool({ name: 'billing_products', arguments: {} })).isError).toBeFalsy();
    const write = await client.callTool({
      name: 'billing_create_product',
      arguments: { sku: 'nope_1', name: 'Nope' },
    });
    expect(write.isError).toBe(true);
    expect(text(write)).toMatch(/^insufficient_scope/);
    expect(await testDb()('products').where({ tenant_id: t.tenant_id, sku: 'nope_1' })).toHaveLength(0);

    // A developer may not give an assistant the owner's role (nor grant access: grants:write is not theirs).
    const developer = await person(t.tenant_id, 'developer');
    const d = new Assistant('Developer Assistant');
    await startSignIn(d, toolsRoot);
    const jar = new Jar(developer.cookie);
    const first = await get(jar, d.authorizationUrl!.href);
    const pageRes = await get(jar, new URL(first.headers.get('location')!, dashboardRoot).href);
    const html = await pageRes.text();
    expect(html).not.toContain('value="owner"');
    expect(html).not.toContain('value="admin"');
    const csrf = /name="_csrf" value="([^"]+)"/.exec(html)![1];
    const action = /<form method="post" action="(\/assistants\/consent\/[^"]+)"/.exec(html)![1];
    const refused = await fetch(new URL(action, dashboardRoot), {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: jar.header, 'content-type': 'application/x-www-form-urlencoded', origin: dashboardRoot },
      body: new URLSearchParams({ _csrf: csrf, decision: 'approve', role: 'owner' }),
    });
    expect(refused.status).toBe(400);
    const dev = await signIn(developer, new Assistant('Developer Assistant 2'));
    const grant = await dev.callTool({
      name: 'billing_grant_entitlement',
      arguments: { app_user_id: 'u1', sku: 'x', duration_days: 1, reason: 'test' },
    });
    expect(grant.isError).toBe(true);
    expect(text(grant)).toMatch(/^insufficient_scope/);

    // The owner removes the viewer: the viewer's assistant is refused from the next request.
    const owner = await person(t.tenant_id, 'owner');
    await executeOperation(
      removeTeamMember,
      { kind: 'user', tenantId: t.tenant_id, userId: owner.id, role: 'owner' },
      { user_id: viewer.id },
      { requestId: crypto.randomUUID(), services, log, surface: 'dashboard' },
    );
    const gone = await toolsPost(a.saved!.access_token);
    expect(gone.status).toBe(401);
    await refill(t.tenant_id);
  });

  it("a role change holds for the person's assistant from its next request, both ways", async () => {
    const t = await newTenant('assistant-role-change');
    const admin = await person(t.tenant_id, 'admin');
    const owner = await person(t.tenant_id, 'owner');
    const client = await signIn(admin, new Assistant('Admin Assistant'));
    const create = (sku: string) => client.callTool({ name: 'billing_create_product', arguments: { sku, name: sku } });
    expect((await create('before_change')).isError).toBeFalsy();
    const changeRole = (role: Role) =>
      executeOperation(
        changeMemberRole,
        { kind: 'user', tenantId: t.tenant_id, userId: owner.id, role: 'owner' },
        { user_id: admin.id, role },
        { requestId: crypto.randomUUID(), services, log, surface: 'dashboard' },
      );
    await changeRole('viewer');
    const refused = await create('after_demotion');
    expect(refused.isError).toBe(true);
    expect(text(refused)).toMatch(/^insufficient_scope/);
    expect((await client.callTool({ name: 'billing_products', arguments: {} })).isError).toBeFalsy();
    // Given back: the consent was for admin, so the assistant writes again, with no new sign-in.
    await changeRole('admin');
    expect((await create('after_restore')).isError).toBeFalsy();
    expect((await testDb()('products').where({ tenant_id: t.tenant_id }).pluck('sku')).sort()).toEqual([
      'after_restore',
      'before_change',
    ]);
  });

  it('the consent decisions are operations: a wider role is refused by name, a person disconnects only their own, the operator none', async () => {
    const t = await newTenant('assistant-ops');
    const developer = await person(t.tenant_id, 'developer');
    const other = await person(t.tenant_id, 'developer');
    const as = (p: Person) => ({
      kind: 'user' as const,
      tenantId: t.tenant_id,
      userId: p.id,
      role: 'developer' as const,
    });
    const meta = (surface: 'dashboard' | 'cli' = 'dashboard') => ({
      requestId: crypto.randomUUID(),
      services,
      log,
      surface,
    });
    const asking = { client_id: 'c-1', client_name: 'Ops Assistant', redirect_host: '127.0.0.1:1', hold_writes: false };
    const wider = await executeOperation(connectAssistant, as(developer), { ...asking, role: 'admin' }, meta()).catch(
      (e: unknown) => e,
    );
    expect(wider).toMatchObject({ status: 400, code: 'invalid_request', extra: { param: 'role' } });
    expect(await testDb()('assistant_grants').where({ tenant_id: t.tenant_id })).toHaveLength(0);

    const made = (await executeOperation(connectAssistant, as(developer), { ...asking, role: 'viewer' }, meta())) as {
      id: string;
    };
    const audit = await testDb()('audit_entries')
      .where({ tenant_id: t.tenant_id, action: 'assistants.connect' })
      .orderBy('created_at');
    expect(audit.map((a) => [a.actor_id, a.outcome])).toEqual([
      [developer.id, 'invalid_request'],
      [developer.id, 'ok'],
    ]);
    expect(audit[1].detail).toMatchObject({ id: made.id, name: 'Ops Assistant', client_id: 'c-1', role: 'viewer' });
    expect(JSON.stringify(audit)).not.toContain('grant_id');

    // Another member neither sees nor disconnects it; the operator (admin CLI) has no assistants.
    expect(await executeOperation(listAssistants, as(other), {}, meta())).toEqual({ data: [] });
    await expect(executeOperation(revokeAssistant, as(other), { id: made.id }, meta())).rejects.toMatchObject({
      status: 404,
      code: 'not_found',
    });
    await expect(
      executeOperation(listAssistants, { kind: 'operator', tenantId: t.tenant_id }, {}, meta('cli')),
    ).rejects.toMatchObject({ status: 403, code: 'insufficient_scope' });
    expect((await testDb()('assistant_grants').where({ id: made.id }).first()).revoked_at).toBeNull();

    // Its person disconnects it; again changes nothing.
    expect(await executeOperation(revokeAssistant, as(developer), { id: made.id }, meta())).toMatchObject({
      id: made.id,
      already_revoked: false,
    });
    expect(await executeOperation(revokeAssistant, as(developer), { id: made.id }, meta())).toMatchObject({
      already_revoked: true,
    });
    const listed = (await executeOperation(listAssistants, as(developer), {}, meta())) as { data: object[] };
    expect(listed.data).toEqual([expect.objectContaining({ id: made.id, name: 'Ops Assistant', role: 'viewer' })]);
    expect(JSON.stringify(listed)).not.toMatch(/grant_id|client_id/);
  });

  it('writes wait for approval when the person chose so: held, named on the Changes page, applied as the assistant once approved', async () => {
    const t = await newTenant('assistant-hold');
    const owner = await person(t.tenant_id, 'owner');
    const client = await signIn(owner, new Assistant('Careful Assistant'), { hold_writes: '1' });
    const held = await client.callTool({ name: 'billing_create_product', arguments: { sku: 'held_1', name: 'Held' } });
    expect(held.isError, text(held)).toBeFalsy();
    expect(text(held)).toMatch(/^Nothing has changed yet/);
    const change = held.structuredContent as { id: string; status: string; requested_by_assistant: string | null };
    expect(change.status).toBe('pending_approval');
    const [grant] = await testDb()('assistant_grants').where({ tenant_id: t.tenant_id });
    expect(change.requested_by_assistant).toBe(grant.id);
    expect(await testDb()('products').where({ tenant_id: t.tenant_id, sku: 'held_1' })).toHaveLength(0);
    const changes = await (await fetch(`${dashboardRoot}/changes`, { headers: { cookie: owner.cookie } })).text();
    expect(changes).toContain('Careful Assistant on behalf of');

    const approved = (await executeOperation(
      approveChange,
      { kind: 'user', tenantId: t.tenant_id, userId: owner.id, role: 'owner' },
      { id: change.id },
      { requestId: crypto.randomUUID(), services, log, surface: 'dashboard' },
    )) as { status: string };
    expect(approved.status).toBe('applied');
    expect(await testDb()('products').where({ tenant_id: t.tenant_id, sku: 'held_1' })).toHaveLength(1);
    const [row] = await testDb()('audit_entries').where({
      tenant_id: t.tenant_id,
      action: 'products.create',
      outcome: 'ok',
    });
    expect(row.actor_type).toBe('assistant');
    expect(row.detail).toMatchObject({ assistant: 'Careful Assistant', on_behalf_of: owner.id, approved_by: owner.id });
  });

  it("an assistant reaches its person's tenant only", async () => {
    const ta = await newTenant('assistant-a');
    const tb = await newTenant('assistant-b');
    await makeProduct(tb.tenant_id, { name: 'Only In B' });
    const owner = await person(ta.tenant_id, 'owner');
    const client = await signIn(owner, new Assistant('Tenant A Assistant'));
    const listed = await client.callTool({ name: 'billing_products', arguments: {} });
    expect(listed.isError).toBeFalsy();
    expect(text(listed)).not.toContain('Only In B');
    // A person of B does not see A's assistants, and cannot revoke them.
    const other = await person(tb.tenant_id, 'owner');
    const [row] = await testDb()('assistant_grants').where({ tenant_id: ta.tenant_id });
    const page = await (
      await fetch(`${dashboardRoot}/settings/assistants`, { headers: { cookie: other.cookie } })
    ).text();
    expect(page).not.toContain('Tenant A Assistant');
    const jar = new Jar(other.cookie);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(
      await (await get(jar, `${dashboardRoot}/settings/assistants`)).text(),
    )![1];
    await fetch(`${dashboardRoot}/settings/assistants/${row.id}/revoke`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: jar.header, 'content-type': 'application/x-www-form-urlencoded', origin: dashboardRoot },
      body: new URLSearchParams({ _csrf: csrf }),
    });
    expect((await testDb()('assistant_grants').where({ id: row.id }).first()).revoked_at).toBeNull();
  });
});
