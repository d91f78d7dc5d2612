import {
  bodyValueOk,
  decodeQuery,
  hasNul,
  queryValueOk,
  UUID_RE,
  type Auth,
  type Body,
  type DocOp,
  type Extras,
  type PathId,
  type QueryPart,
} from './model';
import { OPERATIONS } from '../../operations';

/**
 * The documented answer for a generated request, rule by rule in the order the API promises
 * them (docs/api-conventions.md): parse-level refusals, then the key (before route existence),
 * then tenant headers, then the body, then the input rules, then the operation.
 */

export type Case =
  | {
      kind: 'op';
      host: 'api' | 'alt';
      op: DocOp;
      auth: Auth;
      extras: Extras;
      query: QueryPart[];
      id?: PathId;
      body: Body;
    }
  | { kind: 'method'; host: 'api' | 'alt'; op: DocOp; method: string; auth: Auth; extras: Extras }
  | { kind: 'unknown'; host: 'api' | 'alt'; path: string; method: string; auth: Auth; extras: Extras };

export interface Expected {
  status: number[];
  error?: string[];
  /** Names `param` may carry; `required` when the answer must name one of them. */
  param?: { names: Set<string>; required: boolean };
  allow?: string;
  /** Refused before the key was even looked up: no token, no last_used_at. */
  gate: boolean;
  /** An audit row for this request: writes that reach the operation are audited, refusals included. */
  audited: boolean;
}

const MALFORMED_AUTH: Auth[] = ['none', 'basic', 'bearer-empty', 'publishable', 'duplicate', 'trailing-junk'];
const MAX_BODY = 1024 * 1024;
const FORBIDDEN = /(secret|api_key|credential)/i;

function walk(v: unknown, visit: (key: string | null, value: unknown) => boolean): boolean {
  const stack: unknown[] = [v];
  while (stack.length) {
    const x = stack.pop();
    if (visit(null, x)) return true;
    if (x && typeof x === 'object') {
      for (const [k, c] of Object.entries(x)) {
        if (visit(k, undefined)) return true;
        stack.push(c);
      }
    }
  }
  return false;
}

/** Routes whose operations declare `fuzzModelled: false` (their answers need ids or state the fuzzer does not make). */
const UNMODELLED = new Set(
  OPERATIONS.filter((o) => o.rest && o.fuzzModelled === false).map((o) => `${o.rest!.method} ${o.rest!.path}`),
);
const pathNames = (path: string) => [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
/** The path parameter the generated id goes in: `{id}` when the path has one, else its only parameter. */
export const idParamOf = (path: string) => (path.includes('{id}') ? 'id' : (pathNames(path)[0] ?? 'id'));

export function expected(c: Case, ids: { own: string; other: string; random: string }): Expected {
  const refuse = (status: number, error: string, more: Partial<Expected> = {}): Expected => ({
    status: [status],
    error: [error],
    gate: false,
    audited: false,
    ...more,
  });
  if (c.extras.bigHeader) return refuse(431, 'request_header_fields_too_large', { gate: true });
  const malformed = MALFORMED_AUTH.includes(c.auth);
  if (c.kind !== 'op') {
    // No route takes it: the key is checked (spending nothing), then 404 or 405.
    if (malformed || c.auth === 'unknown-sk') return refuse(401, 'invalid_api_key', { gate: true });
    if (c.kind === 'unknown') return refuse(404, 'not_found', { gate: true });
    return refuse(405, 'method_not_allowed', { gate: true });
  }
  if (malformed) return refuse(401, 'invalid_api_key', { gate: true });
  if (c.extras.tenantHeader) return refuse(400, 'invalid_request', { gate: true });
  if (c.auth === 'unknown-sk') return refuse(401, 'invalid_api_key', { gate: true });

  // Admitted. The body is read first (writes only).
  let body: Record<string, unknown> = {};
  let deepKey: string | undefined;
  const takesBody = c.op.method !== 'GET';
  if (takesBody) {
    const b = c.body;
    if (b.kind === 'size') {
      if (b.bytes > MAX_BODY) return refuse(413, 'payload_too_large');
    } else if (b.kind === 'raw') {
      let parsed: unknown;
      try {
        parsed = JSON.parse(b.bytes.toString('utf8'));
      } catch {
        return refuse(400, 'invalid_request');
      }
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return refuse(400, 'invalid_request');
      body = parsed as Record<string, unknown>;
    } else if (b.kind === 'json') {
      if (!b.value || typeof b.value !== 'object' || Array.isArray(b.value)) return refuse(400, 'invalid_request');
      // What the server sees is the parse of what was sent (JSON.stringify drops undefined, -0 → 0).
      body = JSON.parse(JSON.stringify(b.value));
    } else if (b.kind === 'deep') {
      // One key holding arrays nested past the depth limit (checked below).
      deepKey = b.where === 'known' ? (Object.keys(c.op.body?.properties ?? {})[0] ?? 'nested') : 'nested';
      body = { [deepKey]: [] };
    }
    if (!c.op.body && Object.keys(body).length > 0) return refuse(400, 'invalid_request');
  }
  const query = decodeQuery(c.query);
  for (const [k, v] of Object.entries(query)) {
    if (Array.isArray(v)) return refuse(400, 'invalid_request', { param: { names: new Set([k]), required: true } });
  }
  const pathParams: Record<string, string> = {};
  let idText: string | undefined;
  if (c.id) {
    idText = c.id.kind === 'text' ? safeDecode(c.id.raw) : idOf(c.id, ids);
    pathParams[idParamOf(c.op.path)] = idText;
  }
  const input: Record<string, unknown> = { ...query, ...body, ...pathParams };
  const audited = takesBody; // from here on a write is audited, whatever the outcome

  if (walk(input, (k) => k !== null && FORBIDDEN.test(k))) return refuse(400, 'forbidden_field', { audited });
  // The same walk that looks for forbidden names refuses input nested past 32 levels, by field.
  if (deepKey) return refuse(400, 'invalid_request', { audited, param: { names: new Set([deepKey]), required: true } });
  if (walk(input, (k, v) => (k !== null && hasNul(k)) || (typeof v === 'string' && hasNul(v)))) {
    const names = new Set(
      Object.entries(input)
        .filter(([, v]) => typeof v === 'string' && hasNul(v))
        .map(([k]) => k),
    );
    return refuse(400, 'invalid_request', { audited, param: { names, required: false } });
  }
  const tenantKeys = Object.keys(input).filter(
    (k) => k.toLowerCase().replace(/-/g, '_') === 'tenant_id' || k.toLowerCase() === 'tenant',
  );
  if (tenantKeys.length)
    return refuse(400, 'invalid_request', { audited, param: { names: new Set(tenantKeys), required: true } });

  const bad = new Set<string>();
  const docQuery = new Map(c.op.params.filter((p) => p.in === 'query').map((p) => [p.name, p]));
  const bodyProps: Record<string, object> = c.op.body?.properties ?? {};
  for (const [k, v] of Object.entries(input)) {
    if (Object.hasOwn(pathParams, k)) continue;
    const qp = docQuery.get(k);
    if (qp && Object.hasOwn(query, k) && !Object.hasOwn(body, k)) {
      if (!queryValueOk(qp, v as string)) bad.add(k);
    } else if (Object.hasOwn(bodyProps, k)) {
      if (!bodyValueOk(bodyProps[k], v)) bad.add(k);
    } else bad.add(k);
  }
  // A required body field left out is refused by name too.
  if (takesBody) for (const k of (c.op.body?.required ?? []) as string[]) if (!Object.hasOwn(input, k)) bad.add(k);
  // Resources the oracle does not model (an app user’s page and grants, charts by name, held changes, imports, exchange rates, reconciliation settings):
  // their fields depend on each other and their path names more than a product id, so it asks only for the
  // rules every answer keeps (no 5xx, the Error shape, a documented status, a known field named, nothing
  // written when refused).
  if (UNMODELLED.has(`${c.op.method} ${c.op.path}`)) {
    const names = new Set([...Object.keys(bodyProps), ...docQuery.keys(), ...bad, ...pathNames(c.op.path), 'id']);
    return {
      status: bad.size ? [400, 404] : [200, 201, 202, 400, 404, 409, 413],
      gate: false,
      audited,
      param: { names, required: false },
    };
  }
  if (bad.size) {
    // An endpoint URL the schema accepts may still be refused on its own merits (blank once trimmed, no host),
    // and the service may name it before the field the schema faults.
    if (c.op.path.startsWith('/webhook-endpoints') && typeof input.url === 'string') bad.add('url');
    return refuse(400, 'invalid_request', { audited, param: { names: bad, required: !bad.has('') } });
  }

  // The operation itself.
  if (c.id) {
    // The fuzzer's own id is a product's: on the outbound webhook paths it names no endpoint, event or
    // delivery of the tenant, so it is a 404 there like any other (test/outbound/scopes.test.ts calls them with real ids).
    const ownId = UUID_RE.test(idText!) && idText!.toLowerCase() === ids.own && c.op.path.startsWith('/products/');
    if (!ownId) return refuse(404, 'not_found', { audited });
  }
  // An endpoint URL the schema accepts may still be one that is never fetched (no credentials, no fragment, no private address literal).
  if (takesBody && c.op.path.startsWith('/webhook-endpoints') && Object.hasOwn(input, 'url')) {
    return {
      status: [200, 400],
      error: ['invalid_request'],
      gate: false,
      audited,
      param: { names: new Set(['url']), required: true },
    };
  }
  if (takesBody) return { status: [200, 202, 409], gate: false, audited };
  if (c.op.path === '/paywall') return { status: [200, 404], gate: false, audited };
  return { status: [200], gate: false, audited };
}

/** The id a generated path id stands for (`text` ones are sent as generated). */
export function idOf(id: PathId, ids: { own: string; other: string; random: string }): string {
  if (id.kind === 'text') return id.raw;
  return { own: ids.own, 'own-upper': ids.own.toUpperCase(), 'other-tenant': ids.other, 'random-uuid': ids.random }[
    id.kind
  ];
}

function safeDecode(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}
