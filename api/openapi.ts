import { z } from 'zod';
import { SCOPES, scopeDescription } from '../domain/scopes';
import { OPERATIONS } from '../operations';
import { documentedAs, errorBody } from '../operations/schemas';
import type { Operation } from '../operations/types';
import { changeBody } from '../operations/changes/schema';
import { OUTBOUND_SIGNATURE_SCHEME, outboundWebhooksDoc } from '../operations/outbound-events/bodies';

/** What each error status means (the `error` codes it carries). */
const ERROR_CODES: Record<number, string> = {
  400: 'invalid_request or forbidden_field',
  401: 'invalid_api_key',
  403: 'insufficient_scope',
  404: 'not_found',
  409: 'conflict (the operation names the code)',
  413: 'payload_too_large',
  429: 'rate_limited',
  500: 'server_misconfigured',
  503: 'a dependency did not answer (the operation names the code)',
};
/** Errors every operation can answer. */
const COMMON_ERRORS = [400, 401, 403, 429, 500];

/**
 * Put the documented form in place of what zod renders, for schemas registered in
 * `documentedAs`; and render "any value or null" (`z.unknown().nullable()`) as `{}`, not as
 * an `anyOf` whose empty branch already matches everything (linters rightly flag it).
 */
function override(ctx: { zodSchema: unknown; jsonSchema: Record<string, unknown> }): void {
  const anyOf = ctx.jsonSchema.anyOf as Record<string, unknown>[] | undefined;
  if (anyOf?.some((s) => Object.keys(s).length === 0)) delete ctx.jsonSchema.anyOf;
  const documented = documentedAs.get(ctx.zodSchema as z.ZodType);
  if (!documented) return;
  for (const k of Object.keys(ctx.jsonSchema)) delete ctx.jsonSchema[k];
  Object.assign(ctx.jsonSchema, documented);
}

function schemaOf(s: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const json = z.toJSONSchema(s, {
    io,
    unrepresentable: 'any',
    target: 'draft-2020-12',
    override: override as never,
  }) as Record<string, unknown>;
  delete json.$schema;
  return json;
}

/** What every operation promises (docs/api-conventions.md says the same at more length). */
const PROMISES = [
  'Management API of the billing service. Every request carries a secret key: `Authorization: Bearer sk_…`, sent once.',
  '',
  '- **Errors** are JSON `{"error": code, "detail"?: text, "param"?: field}` with a stable `error` code; `param` names the input field at fault. No client input produces a 5xx.',
  '- **Order of checks**: the key (401 `invalid_api_key`, also before a route is known to exist), tenant headers (400), the body (413 `payload_too_large` past 1 MiB, 400 when it is not a JSON object), the scope (403 `insufficient_scope`), then the input (400 `invalid_request` or `forbidden_field`). Unknown routes are 404 `not_found`; other methods are 405 `method_not_allowed` with `Allow`; oversized headers are 431.',
  '- **Lists** take `limit` (1–200, default 50, clamped) and `offset` (0–2147483647, default 0); rows are newest first with an exact `total`. Unknown parameters, repeated parameters and NUL bytes are refused by name.',
  "- **Ids** are uuids; a malformed id, a missing one and another tenant's are the same 404.",
  '- **Rate limit**: 120 requests per tenant, refilled at 1 per second, shared by every management surface (the publishable-key client endpoints under /v1/sdk have buckets of their own); `RateLimit-*` headers on each answer, 429 `rate_limited` with `Retry-After`. A request refused before its key is looked up spends nothing.',
  '- **Writes** are audited (refusals too). `POST /sync` is guarded by the `confirm_count` of the drift report (409 `count_mismatch`); one sync runs per tenant at a time (409 `sync_in_progress`). `Prefer: respond-async` answers 202 with the run id.',
  '- **Approvals**: a write made with a key that requires approval changes nothing yet: it answers 202 with the change (`status: pending_approval` and the dashboard `url` where a person approves or rejects it); `GET /changes/{id}` follows it to `applied`, `rejected`, `expired` or `stale`.',
  '- Every answer carries `Request-Id`.',
].join('\n');

let published: Readonly<Record<string, unknown>> | undefined;

/**
 * The document GET /v1/openapi.json serves: the operation table's, rendered once per process and
 * shared (frozen) by every app it makes, as both hosts serve it and each rendering converts every
 * operation's schemas.
 */
export function publishedOpenApi(): Readonly<Record<string, unknown>> {
  return (published ??= deepFreeze(buildOpenApi()));
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** OpenAPI 3.1, generated from the operation table (the same schemas that validate requests). */
export function buildOpenApi(ops: Operation[] = OPERATIONS, serverUrl = '/v1'): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of ops) {
    if (!op.rest) continue;
    const input = schemaOf(op.input, 'input') as {
      properties?: Record<string, Record<string, unknown>>;
      required?: string[];
    };
    const pathParams = [...op.rest.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
    const props = input.properties ?? {};
    const parameters = Object.entries(props)
      .filter(
        ([name]) => op.rest!.method === 'GET' || pathParams.includes(name) || (op.rest!.query ?? []).includes(name),
      )
      .map(([name, schema]) => ({
        name,
        in: pathParams.includes(name) ? 'path' : 'query',
        required: pathParams.includes(name) || (input.required ?? []).includes(name),
        schema,
        ...(schema.description ? { description: schema.description } : {}),
      }));
    const responses: Record<string, unknown> = {
      200: { description: 'OK', content: { 'application/json': { schema: schemaOf(op.output, 'output') } } },
    };
    // A body over the size limit is refused before it is read (413), on every operation that takes one.
    const bodyErrors = op.rest.method === 'GET' ? [] : [413];
    for (const code of [...COMMON_ERRORS, ...bodyErrors, ...(op.errors ?? [])]) {
      responses[code] = {
        description: ERROR_CODES[code] ?? 'error',
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
      };
    }
    for (const [code, r] of Object.entries(op.responses ?? {})) {
      responses[code] = {
        description: r.description,
        content: { 'application/json': { schema: schemaOf(r.schema, 'output') } },
      };
    }
    // Any write made with a key that requires approval is held for a person instead (202 with the change).
    if (op.write) {
      const own = op.responses?.[202];
      responses[202] = {
        description: own
          ? `${own.description}; or held for a person's approval (a key that requires approval)`
          : "Held for a person's approval (a key that requires approval): follow it at GET /changes/{id}",
        content: {
          'application/json': {
            schema: own ? schemaOf(z.union([own.schema, changeBody]), 'output') : schemaOf(changeBody, 'output'),
          },
        },
      };
    }
    const inBody = (n: string) => !pathParams.includes(n) && !(op.rest!.query ?? []).includes(n);
    const body =
      op.rest.method === 'GET' || op.rest.noBody
        ? undefined
        : {
            required: true,
            content: {
              'application/json': {
                schema: {
                  ...input,
                  properties: Object.fromEntries(Object.entries(props).filter(([n]) => inBody(n))),
                  ...(input.required ? { required: input.required.filter(inBody) } : {}),
                },
              },
            },
          };
    (paths[op.rest.path] ??= {})[op.rest.method.toLowerCase()] = {
      operationId: op.name,
      summary: op.summary,
      'x-scope': op.scope,
      security: [{ bearer: [op.scope] }],
      parameters,
      ...(body ? { requestBody: body } : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Billing management API', version: '1.0.0', description: PROMISES },
    servers: [{ url: serverUrl }],
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: `Secret key (sk_…). A key carries scopes; each operation names the one it needs (\`x-scope\`):\n\n${SCOPES.map((s) => `- \`${s}\`: ${scopeDescription(s)}`).join('\n')}`,
          // The same list as data: every scope a key can carry, with what it is for.
          'x-scopes': Object.fromEntries(SCOPES.map((s) => [s, scopeDescription(s)])),
        },
        ...OUTBOUND_SIGNATURE_SCHEME,
      },
      schemas: { Error: schemaOf(errorBody, 'output') },
    },
    paths,
    // Outbound events pushed to the tenant's own endpoints (docs/outbound-webhooks.md).
    webhooks: outboundWebhooksDoc((s) => schemaOf(s, 'output')),
  };
}
