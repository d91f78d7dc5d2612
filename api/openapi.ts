import { z } from 'zod';
import { OPERATIONS } from './operations';
import { errorBody } from './operations/schemas';
import type { Operation } from './operations/types';

const COMMON_ERRORS: Record<number, string> = {
  400: 'invalid_request or forbidden_field',
  401: 'invalid_api_key',
  403: 'insufficient_scope',
  429: 'rate_limited',
  500: 'server_misconfigured',
};

function schemaOf(s: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const json = z.toJSONSchema(s, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as Record<string, unknown>;
  delete json.$schema;
  return json;
}

/** OpenAPI 3.1, generated from the operation table (the same schemas that validate requests). */
export function buildOpenApi(ops: Operation[] = OPERATIONS, serverUrl = '/v1'): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of ops) {
    if (!op.rest) continue;
    const input = schemaOf(op.input, 'input') as { properties?: Record<string, any>; required?: string[] };
    const pathParams = [...op.rest.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
    const props = input.properties ?? {};
    const parameters = Object.entries(props)
      .filter(([name]) => op.rest!.method === 'GET' || pathParams.includes(name) || (op.rest!.query ?? []).includes(name))
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
    for (const code of [...Object.keys(COMMON_ERRORS).map(Number), ...(op.errors ?? [])]) {
      responses[code] = { description: COMMON_ERRORS[code] ?? 'error', content: { 'application/json': { schema: schemaOf(errorBody, 'output') } } };
    }
    for (const [code, r] of Object.entries(op.responses ?? {})) {
      responses[code] = { description: r.description, content: { 'application/json': { schema: schemaOf(r.schema, 'output') } } };
    }
    const inBody = (n: string) => !pathParams.includes(n) && !(op.rest!.query ?? []).includes(n);
    const body = op.rest.method === 'GET' || op.rest.noBody ? undefined : {
      required: true,
      content: { 'application/json': { schema: { ...input, properties: Object.fromEntries(Object.entries(props).filter(([n]) => inBody(n))) } } },
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
    info: { title: 'Billing management API', version: '1.0.0' },
    servers: [{ url: serverUrl }],
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'Secret key (sk_…)' } } },
    paths,
  };
}
