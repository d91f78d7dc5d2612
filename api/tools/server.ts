import type Koa from 'koa';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { AssistantActor, KeyActor } from '../../operations/actor';
import { ApiError } from '../../operations/errors';
import { admit, precheckKey, verifyKey } from '../gate';
import { admitAssistant, assistantUnauthorized } from '../assistant-auth';
import { authorizationHeaders, parseBearer } from '../auth';
import { SECRET_KEY_RE } from '../../domain/keys';
import { TOOLS_SCOPE } from '../oauth/provider';
import { readRawBody } from '../json-body';
import { toApiError } from '../../operations/errors';
import { executeOperation } from '../../operations/execute';
import { productRefAsId } from '../../operations/products/ref';
import type { Services } from '../../operations/services';
import { toolCatalog, type ToolDescriptor } from './catalog';
import { checkOrigin } from './origin';
import { TOOL_LIST } from './tool-list';

export const INSTRUCTIONS = [
  'Billing tools for one tenant; you have exactly the scopes of the key you were given.',
  'Store readiness (store_android, store_ios) needs a person with a device: relay every manual_steps entry to the person verbatim, and never claim a manual step is done — only a real sandbox purchase turns the row green.',
  'Before billing_sync_run, read billing_sync_report and pass its confirm_count. A 200 from a sync can still hold failed or skipped entries: read them.',
  'Creating or pricing a product does not put it on sale: billing_sync_product is the step that writes to live providers.',
  'Your key may require a person’s approval for writes: then a write tool changes nothing yet and answers status pending_approval with a url. Tell the person to approve it there (you cannot approve it yourself), then follow it with billing_change_status; never report it as done before that says applied.',
].join('\n');

/** The text a held write's tool result starts with: what happened, and what the assistant does next. */
export function heldText(change: { id: string; url: string; plan: { summary: string } }): string {
  return [
    `Nothing has changed yet: this write waits for a person's approval (change ${change.id}: ${change.plan.summary}).`,
    `Ask the person to approve or reject it in the dashboard: ${change.url}`,
    `You cannot approve it. Follow it with billing_change_status id=${change.id}; it is done only when the status is applied.`,
  ].join(' ');
}

const isHeld = (r: Record<string, unknown>): r is Record<string, unknown> & Parameters<typeof heldText>[0] =>
  r.object === 'change' && r.status === 'pending_approval' && typeof r.url === 'string';

/** What to do next after a refusal, by the REST error code the tool result starts with. */
const NEXT: Record<string, string> = {
  insufficient_scope: 'Ask the account owner for a key that carries that scope; retrying with this key never succeeds.',
  count_mismatch: 'Re-read billing_sync_report and call billing_sync_run again with its confirm_count.',
  drift_incomplete: 'A provider did not answer; try again shortly. Nothing was written.',
  sync_in_progress: 'Another sync is running for this account; read billing_sync_events for it, then retry.',
  not_found: 'Check the id or SKU with billing_products.',
  invalid_request: 'Fix the named argument and call again.',
  forbidden_field: 'Secrets and credentials are entered only in the dashboard; call again without that argument.',
  rate_limited: 'Wait for the time given, then retry.',
};

function refusal(err: unknown) {
  const e = toApiError(err);
  const text = `${e.code}: ${e.detail ?? ''}${NEXT[e.code] ? ` ${NEXT[e.code]}` : ''}`.trim();
  return { isError: true, content: [{ type: 'text' as const, text }], ...(e.status >= 500 ? {} : {}) };
}

function buildServer(
  services: Services,
  actor: KeyActor | AssistantActor,
  catalog: Map<string, ToolDescriptor>,
  meta: { requestId: string; log: Koa.DefaultState['log'] },
): Server {
  const server = new Server(
    { name: 'billing', version: '1.0.0' },
    { capabilities: { tools: {} }, instructions: INSTRUCTIONS },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [...catalog.values()].map((t) => t.definition),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (req) => {
    const tool = catalog.get(req.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${req.params.name}`);
    try {
      const args = (req.params.arguments ?? {}) as Record<string, unknown>;
      // A product named by product_id or sku is resolved inside executeOperation, after the
      // scope check and the body rules: a key without the scope learns nothing of the catalogue.
      const resolveInput = tool.entry.namesProduct ? productRefAsId : undefined;
      const result = (await executeOperation(tool.entry.operation, actor, args, {
        requestId: meta.requestId,
        services,
        log: meta.log,
        surface: 'tool',
        resolveInput,
      })) as Record<string, unknown>;
      // A held write (docs/approvals.md) says so in words first: an assistant reads the text.
      const text = isHeld(result) ? `${heldText(result)}\n${JSON.stringify(result)}` : JSON.stringify(result);
      return { content: [{ type: 'text' as const, text }], structuredContent: result };
    } catch (err) {
      if (err instanceof McpError) throw err;
      return refusal(err);
    }
  });
  return server;
}

/** The catalogue is the tool list's, the same for every app a process makes: its schemas are rendered once. */
let builtCatalog: Map<string, ToolDescriptor> | undefined;

/**
 * The tool server (MCP over Streamable HTTP, stateless): the same bearer gate as REST (401 with
 * WWW-Authenticate; the tenant's one rate-limit bucket, one token per request — a JSON-RPC batch
 * is refused before it spends one), then one server per request over the tool list, each tool
 * running its operation — so scope checks, tenancy, paging clamps, the
 * confirm-count gate and audit are the REST code itself.
 */
export function toolServer(services: Services): Koa.Middleware {
  const catalog = (builtCatalog ??= toolCatalog(TOOL_LIST));
  const toolsUrl = services.config.publicToolsUrl;
  const resource = new URL(`${toolsUrl}/`).href;
  const metadata = {
    resource,
    authorization_servers: [services.config.publicDashboardUrl],
    scopes_supported: [TOOLS_SCOPE],
    bearer_methods_supported: ['header'],
    resource_name: 'Billing tools',
  };
  return async (ctx, next) => {
    if (ctx.path === '/.well-known/oauth-protected-resource' || ctx.path === '/.well-known/oauth-protected-resource/') {
      if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
        throw new ApiError(405, 'method_not_allowed', 'The metadata is read with GET.', {}, { Allow: 'GET' });
      }
      ctx.set('Access-Control-Allow-Origin', '*');
      ctx.set('Cache-Control', 'public, max-age=300');
      ctx.body = metadata;
      return;
    }
    if (ctx.path !== '/') return next();
    try {
      await serve(ctx);
    } catch (err) {
      // Every 401 of the tool server points at its protected-resource metadata (MCP authorization).
      if (err instanceof ApiError && err.status === 401) {
        throw new ApiError(err.status, err.code, err.detail, err.extra, assistantUnauthorized(toolsUrl).headers);
      }
      throw err;
    }
  };

  async function serve(ctx: Koa.Context) {
    if (ctx.method !== 'POST') {
      // The server never initiates messages, so there is no SSE stream to open.
      throw new ApiError(
        405,
        'method_not_allowed',
        'The tool server takes JSON-RPC 2.0 requests by POST only.',
        {},
        { Allow: 'POST' },
      );
    }
    checkOrigin(ctx.get('origin') || undefined, services.config.toolsAllowedOrigins ?? []);
    // A secret key takes the key path unchanged; any other bearer token is an assistant's.
    const bearer = parseBearer(ctx.get('authorization') || undefined);
    const assistantToken =
      bearer && !SECRET_KEY_RE.test(bearer) && authorizationHeaders(ctx.req.rawHeaders).length === 1
        ? bearer
        : undefined;
    if (!assistantToken) precheckKey(ctx.headers, ctx.req.rawHeaders);
    const raw = await readRawBody(ctx);
    let body: unknown;
    let parsed = true;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      parsed = false;
    }
    if (Array.isArray(body)) {
      // A batch used to spend one token for any number of calls. Streamable HTTP has had no
      // batching since MCP 2025-06-18: refused whole, after a key check that spends nothing.
      if (!assistantToken) await verifyKey(services.db, ctx.headers, ctx.req.rawHeaders);
      ctx.status = 400;
      ctx.body = {
        jsonrpc: '2.0',
        id: null,
        error: {
          code: ErrorCode.InvalidRequest,
          message:
            'Invalid Request: JSON-RPC batches are not supported (MCP Streamable HTTP since 2025-06-18); send one request per POST.',
        },
      };
      return;
    }
    const admitted = assistantToken
      ? await admitAssistant(services.db, assistantToken, resource, toolsUrl)
      : await admit(services.db, ctx.headers, ctx.req.rawHeaders);
    const { actor } = admitted;
    ctx.state.tenantId = actor.tenantId;
    if (actor.kind === 'api_key') ctx.state.keyId = actor.keyId;
    ctx.set(admitted.rateHeaders);
    if (!parsed) {
      ctx.status = 400;
      ctx.body = {
        jsonrpc: '2.0',
        id: null,
        error: { code: ErrorCode.ParseError, message: 'Parse error: the body is not JSON' },
      };
      return;
    }
    const server = buildServer(services, actor, catalog, { requestId: ctx.state.requestId, log: ctx.state.log });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    ctx.respond = false;
    ctx.res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await transport.handleRequest(ctx.req, ctx.res, body);
  }
}
