import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { OPERATIONS } from '../../operations';
import { TOOL_LIST } from '../../api/tools/tool-list';
import { SCOPES, type Scope } from '../../domain/scopes';
import { seedDemoTenant } from '../../seed/demo';
import { testDb } from '../helpers/db';
import { keyWith, newTenant, refill, startApi } from '../helpers/api';
import { startTestWorker } from '../helpers/temporal';

/** The tool server driven by the official MCP client over Streamable HTTP. */
describe('tool server (MCP)', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let t: Awaited<ReturnType<typeof newTenant>>;
  const clients: Client[] = [];

  async function connect(key: string): Promise<Client> {
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${api.toolsUrl}/`), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
      }),
    );
    clients.push(client);
    return client;
  }
  const text = (r: any) => r.content.map((c: any) => c.text).join('');

  beforeAll(async () => {
    worker = await startTestWorker();
    api = await startApi({ config: worker.config });
    t = await newTenant('mcp');
    await seedDemoTenant(testDb(), t.tenant_id);
  });
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => {});
    await api.close();
    await worker.stop();
  });

  it('initialize carries instructions to relay store manual steps and never claim them done; ping answers', async () => {
    const c = await connect(t.secret_key);
    const instructions = c.getInstructions() ?? '';
    expect(instructions).toMatch(/manual_steps/);
    expect(instructions).toMatch(/never claim/i);
    expect(await c.ping()).toEqual({});
  });

  it('lists exactly the tools of the tool list, with schemas and honest annotations', async () => {
    const c = await connect(t.secret_key);
    const { tools } = await c.listTools();
    // Both ways: every listed tool is in the table, and every table row is listed.
    const expected = TOOL_LIST.map((x) => x.name).sort();
    expect(tools.map((x) => x.name).sort()).toEqual(expected);
    expect(new Set(expected).size).toBe(TOOL_LIST.length);
    for (const tool of tools) {
      expect(tool.name.startsWith('billing_')).toBe(true);
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type).toBe('object');
      const entry = TOOL_LIST.find((x) => x.name === tool.name)!;
      const op = entry.operation;
      expect(OPERATIONS).toContain(op);
      expect(tool.annotations?.readOnlyHint).toBe(!op.write);
      expect(tool.annotations).toEqual({ title: entry.title, ...entry.annotations });
      expect([tool.title, tool.description]).toEqual([entry.title, entry.description]);
    }
    // Every tool that calls a provider or a store says so, retire included (it stops sales at
    // the live stores); the catalogue writes reach no provider until a sync.
    const openWorld = tools
      .filter((x) => x.annotations?.openWorldHint)
      .map((x) => x.name)
      .sort();
    expect(openWorld).toEqual([
      'billing_customer_refresh',
      'billing_import',
      'billing_retire_product',
      'billing_sync_product',
      'billing_sync_report',
      'billing_sync_run',
    ]);
    expect(tools.find((x) => x.name === 'billing_retire_product')!.annotations?.openWorldHint).toBe(true);
    expect(
      tools
        .filter((x) => x.annotations?.destructiveHint)
        .map((x) => x.name)
        .sort(),
    ).toEqual([
      // Approving a transfer takes the purchase's access from the app user who held it; an undo from the receiver.
      'billing_approve_transfer',
      'billing_delete_webhook_endpoint',
      // Erasing a customer's personal data cannot be undone.
      'billing_erase_customer',
      'billing_retire_product',
      'billing_revoke_grant',
      'billing_sync_run',
      'billing_undo_transfer',
    ]);
    expect(Object.keys(tools.find((x) => x.name === 'billing_product')!.inputSchema.properties ?? {})).toEqual(
      expect.arrayContaining(['product_id', 'sku']),
    );
  });

  it('calls answer as text plus structuredContent; products are named by sku or product_id', async () => {
    const c = await connect(t.secret_key);
    const tenant = await c.callTool({ name: 'billing_tenant', arguments: {} });
    expect(tenant.isError).toBeFalsy();
    expect((tenant.structuredContent as any).scopes).toEqual(expect.arrayContaining([...SCOPES]));
    expect(JSON.parse(text(tenant))).toEqual(tenant.structuredContent);
    const bySku = await c.callTool({ name: 'billing_product', arguments: { sku: 'premium_monthly' } });
    const id = (bySku.structuredContent as any).id;
    const byId = await c.callTool({ name: 'billing_product', arguments: { product_id: id } });
    expect((byId.structuredContent as any).sku).toBe('premium_monthly');
    const page = await c.callTool({ name: 'billing_products', arguments: { limit: 5000 } });
    expect((page.structuredContent as any).pagination.limit).toBe(200); // the same clamp as REST
    const missing = await c.callTool({ name: 'billing_product', arguments: { sku: 'nope' } });
    expect(missing.isError).toBe(true);
    expect(text(missing)).toMatch(/^not_found: /);
  });

  it('refusals are isError results starting with the REST code and saying what to do next', async () => {
    const readOnly = await keyWith(t.tenant_id, SCOPES.filter((s) => s.endsWith(':read')) as Scope[]);
    const c = await connect(readOnly.secret_key);
    const write = await c.callTool({ name: 'billing_sync_run', arguments: { confirm_count: 0 } });
    expect(write.isError).toBe(true);
    expect(text(write)).toMatch(/^insufficient_scope: .*products:sync.*Ask the account owner/);

    const all = await connect(t.secret_key);
    const report = await all.callTool({ name: 'billing_sync_report', arguments: {} });
    const n = (report.structuredContent as any).confirm_count;
    const mismatch = await all.callTool({ name: 'billing_sync_run', arguments: { confirm_count: n + 7 } });
    expect(mismatch.isError).toBe(true);
    expect(text(mismatch)).toMatch(/^count_mismatch: .*Re-read billing_sync_report/);
    const secret = await all.callTool({ name: 'billing_providers', arguments: { api_key: 'x' } });
    expect(text(secret)).toMatch(/^forbidden_field: /);
    await refill(t.tenant_id);
  });

  it('a key without the scope gets the same 403 whether the product it names exists or not (the scope is checked before the SKU is looked up)', async () => {
    const existingId = (
      await testDb()('products').where({ tenant_id: t.tenant_id, sku: 'premium_monthly' }).first('id')
    ).id;
    const names = [
      { sku: 'premium_monthly' },
      { sku: 'no_such_sku' },
      { product_id: existingId },
      { product_id: crypto.randomUUID() },
    ];
    const cases: [string, Scope][] = [
      ['billing_product', 'products:read'],
      ['billing_sync_product', 'products:sync'],
      ['billing_update_product', 'products:write'],
      ['billing_retire_product', 'products:write'],
    ];
    for (const [tool, scope] of cases) {
      const without = await keyWith(t.tenant_id, SCOPES.filter((s) => s !== scope) as Scope[]);
      const c = await connect(without.secret_key);
      const answers = [];
      for (const args of names) {
        const r = await c.callTool({ name: tool, arguments: args });
        expect(r.isError, `${tool} ${JSON.stringify(args)}`).toBe(true);
        answers.push(text(r));
      }
      expect(answers[0], tool).toMatch(new RegExp(`^insufficient_scope: .*${scope}`));
      expect(new Set(answers).size, `${tool}: ${answers.join(' | ')}`).toBe(1);
    }
    await refill(t.tenant_id);
  });

  it('tenants stay apart: one key never reaches another tenant’s product', async () => {
    const other = await newTenant('mcp-other');
    const c = await connect(other.secret_key);
    const r = await c.callTool({ name: 'billing_product', arguments: { sku: 'premium_monthly' } });
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(/^not_found/);
    const list = await c.callTool({ name: 'billing_products', arguments: {} });
    expect((list.structuredContent as any).data).toEqual([]);
  });

  it('HTTP level: a bad key is 401 with WWW-Authenticate before any JSON-RPC; GET is 405; protocol faults are JSON-RPC errors', async () => {
    const rpc = (body: string, key = t.secret_key) =>
      fetch(`${api.toolsUrl}/`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body,
      });
    const bad = await rpc('{"jsonrpc":"2.0","id":1,"method":"ping"}', 'sk_' + 'x'.repeat(40));
    expect(bad.status).toBe(401);
    expect(bad.headers.get('www-authenticate')).toMatch(/^Bearer realm=/);
    expect((await bad.json()).error).toBe('invalid_api_key');
    await expect(connect('sk_' + 'y'.repeat(40))).rejects.toThrow();
    const get = await fetch(`${api.toolsUrl}/`, { headers: { authorization: `Bearer ${t.secret_key}` } });
    expect(get.status).toBe(405);
    const parse = await rpc('{not json');
    expect((await parse.json()).error.code).toBe(-32700);
    const unknown = await rpc(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'no/such', params: {} }));
    expect((await unknown.json()).error.code).toBe(-32601);
    const c = await connect(t.secret_key);
    await expect(c.callTool({ name: 'billing_nope', arguments: {} })).rejects.toMatchObject({ code: -32602 });
  });

  it('DNS rebinding: a foreign browser Origin is refused before the key is read; loopback and absent Origins pass', async () => {
    const ping = (headers: Record<string, string>) =>
      fetch(`${api.toolsUrl}/`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${t.secret_key}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
        body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
      });
    const evil = await ping({ origin: 'http://evil.example.com' });
    expect(evil.status).toBe(403);
    expect(await evil.json()).toMatchObject({ error: 'forbidden_origin' });
    expect((await ping({ origin: 'null' })).status).toBe(403);
    for (const origin of [undefined, 'http://localhost:3000', 'http://127.0.0.1:9', 'http://[::1]:8080']) {
      const ok = await ping(origin ? { origin } : {});
      expect(ok.status, String(origin)).toBe(200);
    }
  });

  it('a NUL byte in an argument is invalid_request naming it, never a server fault (found by the tool fuzzer)', async () => {
    const c = await connect(t.secret_key);
    const r = await c.callTool({ name: 'billing_product', arguments: { sku: 'a\u0000b' } });
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(/^invalid_request: sku must not contain a NUL byte/);
  });
});
