import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Worker } from '@temporalio/worker';
import type { Browser } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { approveChange } from '../../operations';
import { rejectChange } from '../../operations/changes/approve';
import { executeOperation } from '../../operations/execute';
import type { ApiError } from '../../operations/errors';
import type { Actor } from '../../operations/actor';
import { TOOL_LIST } from '../../api/tools/tool-list';
import { changeWorkflowId } from '../../domain/changes';
import { TENANT_ATTR } from '../../workflows/search-attributes';
import { createLogger } from '../../runtime/logger';
import { testDb } from '../helpers/db';
import { historyText } from '../helpers/history';
import { dataConverterFor } from '../../temporal/payload-codec';
import { assertMatchesOpenApi, call, newTenant, refill, startApi } from '../helpers/api';
import { makeApiKey, makeProduct } from '../helpers/factories';
import { startTestWorker } from '../helpers/temporal';
import { until } from '../helpers/until';
import { expectAccessible, launchBrowser, screenshot, signUp, uniqueEmail } from '../e2e/helpers/browser';

/**
 * Writes that wait for a person (docs/approvals.md): a key that requires approval holds every
 * write as a change with its plan and a workflow; a person approves or rejects it in the
 * dashboard (Chromium); the expiry, a stale plan, the requesting key and another tenant's
 * person all write nothing.
 */
describe('writes held for approval', () => {
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let api: Awaited<ReturnType<typeof startApi>>;
  let browser: Browser;
  const clients: Client[] = [];

  async function connect(key: string): Promise<Client> {
    const client = new Client({ name: 'approvals-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${api.toolsUrl}/`), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
      }),
    );
    clients.push(client);
    return client;
  }
  const text = (r: any) => r.content.map((c: any) => c.text).join('');
  const run = (op: Parameters<typeof executeOperation>[0], actor: Actor, input: Record<string, unknown>) =>
    executeOperation(op, actor, input, {
      requestId: crypto.randomUUID(),
      services: api.services,
      log: createLogger('silent'),
      surface: 'dashboard',
    });
  const workflowOf = (tenantId: string, changeId: string) =>
    worker.client.workflow.getHandle(changeWorkflowId(tenantId, changeId));

  beforeAll(async () => {
    worker = await startTestWorker();
    api = await startApi({ config: worker.config, vault: worker.vault });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => {});
    await browser?.close();
    await api?.close();
    await worker?.stop();
  });

  it('a tool write under an approval key does nothing until a person approves it in Chromium, then applies', async () => {
    const ctx = await browser.newContext();
    const p = await ctx.newPage();
    const email = uniqueEmail('approvals');
    await signUp(p, api.dashboardRoot, email);
    const user = await testDb()('dashboard_users').where({ email }).first();
    const tenantId: string = user.tenant_id;
    const product = await makeProduct(tenantId, { name: 'Premium' });

    // The key form's checkbox makes an approval key.
    await p.getByLabel('Name', { exact: true }).fill('assistant');
    await p.getByLabel('products:write', { exact: true }).check();
    await p.getByLabel('products:read', { exact: true }).check();
    await p.getByLabel('Writes wait for approval').check();
    await p.getByRole('button', { name: 'Create key' }).click();
    const secret = await p.getByLabel('Secret key', { exact: true }).inputValue();
    const keyRow = await testDb()('api_keys').where({ tenant_id: tenantId, name: 'assistant' }).first();
    expect(keyRow.require_approval).toBe(true);
    await expect(p.getByText('Writes wait for approval').count()).resolves.toBeGreaterThan(1);

    const mcp = await connect(secret);
    expect(mcp.getInstructions()).toMatch(/person’s approval/);
    await mcp.listTools(); // the client then validates structured output against each tool's schema
    const held = (await mcp.callTool({
      name: 'billing_update_product',
      arguments: { sku: product.sku, name: 'Premium Plus' },
    })) as any;
    expect(held.isError).toBeFalsy();
    expect(text(held)).toMatch(/^Nothing has changed yet: this write waits for a person's approval/);
    expect(held.structuredContent).toMatchObject({
      object: 'change',
      status: 'pending_approval',
      operation: 'products.update',
      plan: { targets: ['catalogue'], before: { sku: product.sku, name: 'Premium' } },
    });
    const changeId: string = held.structuredContent.id;
    expect(held.structuredContent.url).toBe(`${api.services.config.publicDashboardUrl}/changes/${changeId}`);
    expect(text(held)).toContain(held.structuredContent.url);
    // Nothing written; the change waits in its workflow, found by tenant like every other run.
    expect((await testDb()('products').where({ id: product.id }).first()).name).toBe('Premium');
    const desc = await workflowOf(tenantId, changeId).describe();
    expect(desc.status.name).toBe('RUNNING');
    expect(desc.typedSearchAttributes.get(TENANT_ATTR)).toBe(tenantId);
    const status = (await mcp.callTool({ name: 'billing_change_status', arguments: { id: changeId } })) as any;
    expect(status.structuredContent.status).toBe('pending_approval');

    await p.getByRole('link', { name: 'Changes' }).click();
    await p.waitForURL('**/changes');
    await expect(p.getByText(`Change the named fields of a product`).count()).resolves.toBe(1);
    await expect(p.getByText('"Premium Plus"').count()).resolves.toBe(1);
    await expectAccessible(p, 'changes waiting');
    await screenshot(p, 'changes-pending');
    await p.getByRole('button', { name: `Approve change ${changeId}` }).click();
    await expect(p.getByRole('status').textContent()).resolves.toContain('Applied');
    await expect(p.locator(`#change-status-${changeId}`).textContent()).resolves.toBe('Applied');
    await expectAccessible(p, 'change applied');

    expect((await testDb()('products').where({ id: product.id }).first()).name).toBe('Premium Plus');
    expect(await workflowOf(tenantId, changeId).result()).toEqual({ status: 'applied' });
    const done = (await mcp.callTool({ name: 'billing_change_status', arguments: { id: changeId } })) as any;
    expect(done.structuredContent).toMatchObject({ status: 'applied', outcome: { result: { id: product.id } } });
    // Audited twice: the person's approval, and the write as the key that asked, naming the person.
    const audit = await testDb()('audit_entries')
      .where({ tenant_id: tenantId })
      .whereIn('action', ['products.update', 'changes.approve'])
      .orderBy('created_at');
    expect(audit.map((a) => [a.action, a.actor_type, a.outcome])).toEqual([
      ['products.update', 'api_key', 'pending_approval'],
      ['products.update', 'api_key', 'ok'],
      ['changes.approve', 'user', 'ok'],
    ]);
    expect(audit[1].actor_id).toBe(keyRow.id);
    expect(audit[1].detail).toMatchObject({ change_id: changeId, approved_by: user.id, surface: 'tool' });
    expect(audit[2].actor_id).toBe(user.id);
    // The workflow's history holds ids only (no product name, no SKU, no email) and replays on the current code.
    const history = await workflowOf(tenantId, changeId).fetchHistory();
    const said = await historyText(history, { codec: worker.codec, workflowId: changeWorkflowId(tenantId, changeId) });
    expect(said).toContain(changeId);
    for (const personal of ['Premium Plus', product.sku, email]) expect(said).not.toContain(personal);
    const query = `WorkflowId = '${changeWorkflowId(tenantId, changeId)}'`;
    const histories = await until(
      'the change workflow visible',
      async () => {
        const found = [];
        for await (const h of worker.client.workflow.list({ query }).intoHistories()) found.push(h);
        return found;
      },
      (found) => found.length === 1,
    );
    let replayed = 0;
    for await (const r of Worker.runReplayHistories(
      { workflowBundle: { codePath: inject('workflowBundlePath') }, dataConverter: dataConverterFor(worker.vault) },
      histories,
    )) {
      expect([r.workflowId, r.error]).toEqual([changeWorkflowId(tenantId, changeId), undefined]);
      replayed++;
    }
    expect(replayed).toBe(1);
    // Approving twice does nothing more.
    const again = await run(approveChange, { kind: 'user', tenantId, userId: user.id, role: 'owner' }, { id: changeId })
      .then(() => 'ran')
      .catch((e) => e.code);
    expect(again).toBe('change_not_pending');

    // Rejected in Chromium: nothing written, the workflow ends rejected.
    const held2 = (await mcp.callTool({
      name: 'billing_update_product',
      arguments: { sku: product.sku, name: 'Never' },
    })) as any;
    const rejectedId: string = held2.structuredContent.id;
    await p.goto(`${api.dashboardRoot}/changes/${rejectedId}`);
    await p.getByRole('button', { name: `Reject change ${rejectedId}` }).click();
    await expect(p.locator(`#change-status-${rejectedId}`).textContent()).resolves.toBe('Rejected');
    expect(await workflowOf(tenantId, rejectedId).result()).toEqual({ status: 'rejected' });
    expect((await testDb()('products').where({ id: product.id }).first()).name).toBe('Premium Plus');
    await ctx.close();
  });

  it('a change whose product moved before approval ends stale and writes nothing', async () => {
    const t = await newTenant('approvals-stale');
    const product = await makeProduct(t.tenant_id, { name: 'Basic' });
    const key = await makeApiKey(t.tenant_id, ['products:write'], { requireApproval: true });
    const mcp = await connect(key.secret_key);
    const held = (await mcp.callTool({
      name: 'billing_update_product',
      arguments: { product_id: product.id, name: 'Basic Plus' },
    })) as any;
    const changeId: string = held.structuredContent.id;
    // Someone else edits the product meanwhile.
    await testDb()('products').where({ id: product.id }).update({ name: 'Basic (edited)' });
    const person: Actor = { kind: 'user', tenantId: t.tenant_id, userId: crypto.randomUUID(), role: 'owner' };
    const answer = (await run(approveChange, person, { id: changeId })) as any;
    expect(answer).toMatchObject({ status: 'stale', outcome: { now: { name: 'Basic (edited)' } } });
    expect(answer.outcome.detail).toMatch(/changed since/);
    expect((await testDb()('products').where({ id: product.id }).first()).name).toBe('Basic (edited)');
    expect(await workflowOf(t.tenant_id, changeId).result()).toEqual({ status: 'stale' });
    const applied = await testDb()('audit_entries').where({
      tenant_id: t.tenant_id,
      action: 'products.update',
      outcome: 'ok',
    });
    expect(applied).toHaveLength(0);
  });

  it('the key that asked cannot approve (no route, no tool, refused by the policy); another tenant’s person gets a 404', async () => {
    const t = await newTenant('approvals-self');
    const other = await newTenant('approvals-other');
    const product = await makeProduct(t.tenant_id);
    const key = await makeApiKey(t.tenant_id, ['products:write', 'audit:read'], { requireApproval: true });
    const mcp = await connect(key.secret_key);
    const held = (await mcp.callTool({
      name: 'billing_update_product',
      arguments: { product_id: product.id, name: 'Mine' },
    })) as any;
    const changeId: string = held.structuredContent.id;

    expect(TOOL_LIST.some((x) => x.operation === approveChange || x.operation === rejectChange)).toBe(false);
    for (const verb of ['approve', 'reject']) {
      const r = await call(api.apiUrl, `/changes/${changeId}/${verb}`, key.secret_key, { method: 'POST', body: '{}' });
      expect(r.status).toBe(404);
    }
    const asKey: Actor = {
      kind: 'api_key',
      tenantId: t.tenant_id,
      keyId: key.key_id,
      keyName: '',
      scopes: ['products:write', 'audit:read'],
      expiresAt: null,
      requireApproval: true,
    };
    for (const op of [approveChange, rejectChange]) {
      const refused = (await run(op, asKey, { id: changeId }).catch((e: ApiError) => e)) as ApiError;
      expect([refused.status, refused.code]).toEqual([403, 'insufficient_scope']);
    }
    // Another tenant's owner: the change is not found, and stays pending.
    const stranger: Actor = { kind: 'user', tenantId: other.tenant_id, userId: crypto.randomUUID(), role: 'owner' };
    for (const op of [approveChange, rejectChange]) {
      const refused = (await run(op, stranger, { id: changeId }).catch((e: ApiError) => e)) as ApiError;
      expect([refused.status, refused.code]).toEqual([404, 'not_found']);
    }
    const otherKey = (await call(api.apiUrl, `/changes/${changeId}`, other.secret_key)).status;
    expect(otherKey).toBe(404);
    expect((await testDb()('held_changes').where({ id: changeId }).first()).status).toBe('pending_approval');
    expect((await testDb()('products').where({ id: product.id }).first()).name).toBe(product.name);
    // A signal that names another tenant changes nothing either.
    await workflowOf(t.tenant_id, changeId).signal('decided', { tenantId: other.tenant_id, status: 'applied' });
    expect((await workflowOf(t.tenant_id, changeId).describe()).status.name).toBe('RUNNING');
    await run(
      rejectChange,
      { kind: 'user', tenantId: t.tenant_id, userId: crypto.randomUUID(), role: 'owner' },
      { id: changeId },
    );
  });

  it('REST: a write answers 202 pending_approval with the link; GET /v1/changes/{id} follows it to applied', async () => {
    const t = await newTenant('approvals-rest');
    const key = await makeApiKey(t.tenant_id, ['products:write'], { requireApproval: true });
    const sku = `held_${crypto.randomBytes(3).toString('hex')}`;
    const r = await call(api.apiUrl, '/products', key.secret_key, {
      method: 'POST',
      body: JSON.stringify({ sku, name: 'Held product' }),
    });
    expect(r.status).toBe(202);
    expect(r.body).toMatchObject({ status: 'pending_approval', operation: 'products.create' });
    expect(r.body.url).toMatch(/\/changes\/[0-9a-f-]{36}$/);
    assertMatchesOpenApi('POST', '/products', r);
    expect(await testDb()('products').where({ tenant_id: t.tenant_id, sku })).toHaveLength(0);

    // The key reads its own change without audit:read; another key without it gets a 404; audit:read reads any.
    const own = await call(api.apiUrl, `/changes/${r.body.id}`, key.secret_key);
    expect([own.status, own.body.status]).toEqual([200, 'pending_approval']);
    assertMatchesOpenApi('GET', '/changes/{id}', own);
    const sibling = await makeApiKey(t.tenant_id, ['products:write']);
    expect((await call(api.apiUrl, `/changes/${r.body.id}`, sibling.secret_key)).status).toBe(404);
    expect((await call(api.apiUrl, `/changes/${r.body.id}`, t.secret_key)).status).toBe(200);
    expect((await call(api.apiUrl, `/changes/not-a-uuid`, key.secret_key)).status).toBe(404);

    await run(
      approveChange,
      { kind: 'user', tenantId: t.tenant_id, userId: crypto.randomUUID(), role: 'owner' },
      {
        id: r.body.id,
      },
    );
    const after = await call(api.apiUrl, `/changes/${r.body.id}`, key.secret_key);
    expect(after.body).toMatchObject({ status: 'applied', outcome: { result: { sku } } });
    expect(await testDb()('products').where({ tenant_id: t.tenant_id, sku })).toHaveLength(1);
    await refill(t.tenant_id);
  });
});

describe('held changes expire', () => {
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let api: Awaited<ReturnType<typeof startApi>>;
  beforeAll(async () => {
    // A short configured expiry: the workflow's durable timer fires, no sleep in the test.
    worker = await startTestWorker({ config: { approvalExpirySeconds: 1 } });
    api = await startApi({ config: worker.config, vault: worker.vault });
  });
  afterAll(async () => {
    await api?.close();
    await worker?.stop();
  });

  it('nobody decides: the change ends expired, nothing is written, and approving it afterwards is refused', async () => {
    const t = await newTenant('approvals-expiry');
    const product = await makeProduct(t.tenant_id, { name: 'Kept' });
    const key = await makeApiKey(t.tenant_id, ['products:write'], { requireApproval: true });
    const r = await call(api.apiUrl, `/products/${product.id}/prices`, key.secret_key, {
      method: 'POST',
      body: JSON.stringify({ prices: [{ country: 'US', currency: 'USD', amount: 1234 }] }),
    });
    expect(r.status).toBe(202);
    const result = await worker.client.workflow.getHandle(changeWorkflowId(t.tenant_id, r.body.id)).result();
    expect(result).toEqual({ status: 'expired' });
    const after = await call(api.apiUrl, `/changes/${r.body.id}`, key.secret_key);
    expect(after.body.status).toBe('expired');
    const person: Actor = { kind: 'user', tenantId: t.tenant_id, userId: crypto.randomUUID(), role: 'owner' };
    const late = (await executeOperation(
      approveChange,
      person,
      { id: r.body.id },
      {
        requestId: crypto.randomUUID(),
        services: api.services,
        log: createLogger('silent'),
        surface: 'dashboard',
      },
    ).catch((e: ApiError) => e)) as ApiError;
    expect([late.status, late.code]).toEqual([409, 'change_not_pending']);
    expect(await testDb()('prices').where({ product_id: product.id })).toHaveLength(0);
    await until(
      'expiry recorded',
      async () => (await testDb()('held_changes').where({ id: r.body.id }).first()).outcome,
      (o) => o !== null,
    );
  });
});
