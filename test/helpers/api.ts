import http from 'node:http';
import type net from 'node:net';
import type Koa from 'koa';
import { Client, Connection } from '@temporalio/client';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { createApiApp, createDashboardApp, createToolsApp } from '../../api/apps';
import { buildOpenApi } from '../../api/openapi';
import { createHttpServer } from '../../api/http-server';
import type { Services } from '../../operations/services';
import { startDispatcher, stopDispatcher } from '../../api/webhooks/dispatcher';
import { startEntitlementWaits, stopEntitlementWaits } from '../../api/sdk/entitlement-waits';
import { loadConfig } from '../../runtime/config';
import { createVault, generateMasterKey } from '../../vault/vault';
import { createAdapters } from '../../providers';
import { dataConverterFor } from '../../temporal/payload-codec';
import { createLogger } from '../../runtime/logger';
import type { Scope } from '../../domain/scopes';
import { makeApiKey, makeTenant } from './factories';
import { appDb, testDb } from './db';
import { runMasterKeyIfAny, temporalAddressIfAny } from './provided';

export async function listen(app: Koa | http.RequestListener): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createHttpServer(typeof app === 'function' ? app : app.callback());
  const sockets = new Set<net.Socket>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

export function testServices(overrides: Partial<Services> = {}): Services {
  // The database tier has no Temporal: there the API runs as api/main.ts does without
  // TEMPORAL_ADDRESS, and an operation that starts a workflow answers that it is not configured.
  const address = overrides.config?.temporalAddress ?? temporalAddressIfAny();
  const config = { ...loadConfig({ NODE_ENV: 'test' }), temporalAddress: address, ...overrides.config };
  // As api/main.ts does: one vault and one adapter set for the process. The vault is the
  // worker's the test pairs this API with (startTestWorker puts its key in the config); an API
  // with no worker gets the run's key (one deployment's, test/global-setup.ts). The payload codec uses the same key.
  const vault = overrides.vault ?? createVault(config.masterKey ?? runMasterKeyIfAny() ?? generateMasterKey());
  const connection = address ? Connection.lazy({ address }) : undefined;
  return {
    db: appDb(),
    temporal: connection
      ? { connection, client: new Client({ connection, namespace: 'default', dataConverter: dataConverterFor(vault) }) }
      : null,
    adapters: overrides.adapters ?? createAdapters(config),
    ...overrides,
    config,
    vault,
  };
}

/** The three listeners in-process on free ports, sharing the run's database and Temporal. */
export async function startApi(overrides: Partial<Services> = {}, logDestination?: NodeJS.WritableStream) {
  const services = testServices(overrides);
  const log = createLogger(logDestination ? 'info' : 'silent', logDestination);
  const api = await listen(createApiApp(services, log));
  const dashboard = await listen(createDashboardApp(services, log));
  const tools = await listen(createToolsApp(services, log));
  // As api/main.ts does at boot.
  startDispatcher(services);
  await startEntitlementWaits(services);
  return {
    services,
    apiUrl: `${api.url}/v1`,
    altUrl: `${dashboard.url}/v1`,
    apiRoot: api.url,
    dashboardRoot: dashboard.url,
    toolsUrl: tools.url,
    async close() {
      await stopEntitlementWaits(services);
      await Promise.all([api.close(), dashboard.close(), tools.close()]);
      await stopDispatcher(services);
    },
  };
}

/** A new tenant (test/helpers/factories.ts makeTenant). */
export async function newTenant(name = 'tenant') {
  return makeTenant(name);
}

export async function keyWith(tenantId: string, scopes: Scope[], opts: { expiresInSeconds?: number } = {}) {
  return makeApiKey(tenantId, scopes, opts);
}

/** Refill a tenant's bucket so long test sequences measure behaviour, not the rate limit. */
export async function refill(tenantId: string) {
  await testDb()('rate_limit_buckets').where({ tenant_id: tenantId }).del();
  await testDb()('client_rate_limit_buckets').where({ tenant_id: tenantId }).del();
}

export interface Reply {
  status: number;
  headers: Headers;
  body: any;
}

export async function call(base: string, path: string, key?: string, init: RequestInit = {}): Promise<Reply> {
  const headers = new Headers(init.headers);
  if (key !== undefined) headers.set('authorization', `Bearer ${key}`);
  if (init.body && !headers.has('content-type')) headers.set('content-type', 'application/json');
  const res = await fetch(base + path, { ...init, headers });
  const text = await res.text();
  let body: any = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    /* not JSON */
  }
  const reply = { status: res.status, headers: res.headers, body };
  // Every response from a documented /v1 operation is checked against the OpenAPI document.
  if (base.endsWith('/v1')) {
    const template = documentedTemplate(init.method ?? 'GET', path.split('?')[0]);
    if (template) assertMatchesOpenApi(init.method ?? 'GET', template, reply);
  }
  return reply;
}

function documentedTemplate(method: string, path: string): string | undefined {
  for (const [template, ops] of Object.entries(doc.paths)) {
    if (!ops[method.toLowerCase()]) continue;
    const re = new RegExp(`^${template.replace(/\{\w+\}/g, '[^/]+')}$`);
    if (re.test(path)) return template;
  }
  return undefined;
}

// ── OpenAPI response validation: every response a test receives can be checked against the document.
const doc = buildOpenApi() as { paths: Record<string, Record<string, any>> };
const ajv = new Ajv2020({ strict: false, allErrors: true });
(addFormats as unknown as (a: Ajv2020) => void)(ajv);
const validators = new Map<string, ReturnType<typeof ajv.compile>>();

/** Assert `reply` matches the documented response of `METHOD /template` for its status. */
export function assertMatchesOpenApi(method: string, template: string, reply: Reply): void {
  const op = doc.paths[template]?.[method.toLowerCase()];
  if (!op) throw new Error(`OpenAPI has no ${method} ${template}`);
  const resp = op.responses[String(reply.status)];
  if (!resp)
    throw new Error(
      `OpenAPI ${method} ${template} documents no ${reply.status} response (got ${JSON.stringify(reply.body)})`,
    );
  const key = `${method} ${template} ${reply.status}`;
  let validate = validators.get(key);
  if (!validate) {
    const schema = resp.content['application/json'].schema;
    // Shared schemas (the Error shape) are referenced from components.
    validate = ajv.compile(schema.$ref ? (doc as any).components.schemas[schema.$ref.split('/').pop()] : schema);
    validators.set(key, validate);
  }
  if (!validate(reply.body)) {
    throw new Error(`response of ${key} does not match OpenAPI: ${ajv.errorsText(validate.errors)}`);
  }
}
