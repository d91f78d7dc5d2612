import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { grantWorkflowId } from '../../temporal/workflow-starts';
import { testDb } from '../helpers/db';
import { keyWith, newTenant, startApi } from '../helpers/api';
import { makeEntitlement, makeProduct } from '../helpers/factories';
import { startTestWorker } from '../helpers/temporal';

/**
 * The support desk's tools through the official MCP client (docs/support.md): billing_customer
 * with customers:read, billing_grant_entitlement and billing_revoke_grant with grants:write, the
 * same answers and refusals as REST; another tenant's customer is not found.
 */
describe('support desk tools (MCP)', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let t: Awaited<ReturnType<typeof newTenant>>;
  const clients: Client[] = [];
  const connect = async (key: string) => {
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${api.toolsUrl}/`), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
      }),
    );
    clients.push(client);
    return client;
  };
  const text = (r: any) => r.content.map((c: any) => c.text).join('');

  beforeAll(async () => {
    worker = await startTestWorker();
    api = await startApi({ config: worker.config, vault: worker.vault });
    t = await newTenant('support-tools');
    const product = await makeProduct(t.tenant_id, { sku: 'pro_weekly' });
    await makeEntitlement(t.tenant_id, {
      appUserId: 'tool_user',
      provider: 'store_ios',
      productId: product.id,
      subscription: { status: 'active' },
    });
  });
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => {});
    await api?.close();
    await worker?.stop();
  });

  it('billing_customer reads one customer with customers:read; a key without it, and another tenant, are refused', async () => {
    const reader = await connect((await keyWith(t.tenant_id, ['customers:read'])).secret_key);
    const r = await reader.callTool({ name: 'billing_customer', arguments: { app_user_id: 'tool_user', limit: 5 } });
    expect(r.isError).toBeFalsy();
    const c = r.structuredContent as any;
    expect(c).toMatchObject({ object: 'customer', app_user_id: 'tool_user', is_premium: true });
    expect(c.entitlements[0]).toMatchObject({ source: 'paid', provider: 'store_ios', why: { rule: 'store_answer' } });
    expect(c.entitlements[0].why.subscription.store_purchase).toMatchObject({ is_sandbox: true, token_hash: null });
    expect(c.entitlements[0].why.subscription.store_purchase.original_transaction_id).toEqual(expect.any(String));
    expect(c.timeline.pagination.limit).toBe(5);
    expect(JSON.parse(text(r))).toEqual(c);

    const narrow = await connect((await keyWith(t.tenant_id, ['subscribers:read'])).secret_key);
    const refused = await narrow.callTool({ name: 'billing_customer', arguments: { app_user_id: 'tool_user' } });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toMatch(/^insufficient_scope: .*customers:read/);

    const other = await newTenant('support-tools-other');
    const stranger = await connect((await keyWith(other.tenant_id, ['customers:read', 'grants:write'])).secret_key);
    const missing = await stranger.callTool({ name: 'billing_customer', arguments: { app_user_id: 'tool_user' } });
    expect(missing.isError).toBe(true);
    expect(text(missing)).toMatch(/^not_found/);
    const crossGrant = await stranger.callTool({
      name: 'billing_grant_entitlement',
      arguments: { app_user_id: 'tool_user', sku: 'pro_weekly', duration_days: 1, reason: 'x' },
    });
    expect(crossGrant.isError).toBe(true);
    expect(text(crossGrant)).toMatch(/^not_found/);
  });

  it('billing_grant_entitlement and billing_revoke_grant with grants:write; the audit names the key; a bad end is refused naming it', async () => {
    const key = await keyWith(t.tenant_id, ['grants:write']);
    const c = await connect(key.secret_key);
    const bad = await c.callTool({
      name: 'billing_grant_entitlement',
      arguments: { app_user_id: 'tool_user', sku: 'pro_weekly', expires_at: '2001-01-01T00:00:00Z', reason: 'r' },
    });
    expect(bad.isError).toBe(true);
    expect(text(bad)).toMatch(/^invalid_request: .*expires_at/);

    const made = await c.callTool({
      name: 'billing_grant_entitlement',
      arguments: { app_user_id: 'tool_user', sku: 'pro_weekly', duration_days: 7, reason: 'support ticket 1234' },
    });
    expect(made.isError).toBeFalsy();
    const g = made.structuredContent as any;
    expect(g).toMatchObject({ object: 'grant', state: 'active', sku: 'pro_weekly', granted_by: key.key_id });
    expect(g.workflow_id).toBe(grantWorkflowId(t.tenant_id, g.id));

    const revoked = await c.callTool({
      name: 'billing_revoke_grant',
      arguments: { app_user_id: 'tool_user', id: g.id },
    });
    expect(revoked.isError).toBeFalsy();
    expect(revoked.structuredContent).toMatchObject({ id: g.id, state: 'revoked', revoked_by: key.key_id });

    const audit = await testDb()('audit_entries')
      .where({ tenant_id: t.tenant_id })
      .whereIn('action', ['grants.create', 'grants.revoke'])
      .orderBy('created_at');
    expect(audit.map((a) => [a.action, a.outcome, a.actor_id, a.detail?.surface])).toEqual([
      ['grants.create', 'invalid_request', key.key_id, 'tool'],
      ['grants.create', 'ok', key.key_id, 'tool'],
      ['grants.revoke', 'ok', key.key_id, 'tool'],
    ]);
  });
});
