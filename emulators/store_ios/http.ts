import crypto from 'node:crypto';
import type http from 'node:http';
import type Koa from 'koa';

/** An App Store Connect API error: `{ errors: [{ id, status, code, title, detail, source? }] }`. */
export class ConnectError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly title: string,
    readonly detail: string,
    readonly source?: { pointer?: string; parameter?: string },
  ) {
    super(detail);
  }
}

/** An App Store Server API error: `{ errorCode, errorMessage }`. */
export class ServerApiError extends Error {
  constructor(
    readonly status: number,
    readonly errorCode: number,
    readonly errorMessage: string,
  ) {
    super(errorMessage);
  }
}

export const notFound = (type: string, id: string) =>
  new ConnectError(
    404,
    'NOT_FOUND',
    'The specified resource does not exist',
    `There is no resource of type '${type}' with id '${id}'`,
  );

export const paramError = (parameter: string, detail: string) =>
  new ConnectError(400, 'PARAMETER_ERROR.INVALID', 'A parameter has an invalid value', detail, { parameter });

export const entityError = (code: string, detail: string, pointer: string) =>
  new ConnectError(409, `ENTITY_ERROR${code ? `.${code}` : ''}`, 'The provided entity is invalid', detail, { pointer });

export function sendConnectError(ctx: Koa.Context, err: ConnectError): void {
  ctx.status = err.status;
  ctx.type = 'application/json';
  ctx.body = {
    errors: [
      {
        id: crypto.randomUUID(),
        status: String(err.status),
        code: err.code,
        title: err.title,
        detail: err.detail,
        ...(err.source ? { source: err.source } : {}),
      },
    ],
  };
}

export function sendServerApiError(ctx: Koa.Context, err: ServerApiError): void {
  ctx.status = err.status;
  ctx.body = { errorCode: err.errorCode, errorMessage: err.errorMessage };
}

export async function readJson(req: http.IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  try {
    for await (const c of req) chunks.push(c as Buffer);
  } catch {
    // the client went away mid-request (e.g. it timed out); nobody will read the answer
    throw new ConnectError(
      400,
      'ENTITY_UNPROCESSABLE',
      'The request entity could not be read',
      'The request body was not received completely',
    );
  }
  const raw = Buffer.concat(chunks).toString('utf8');
  if (!raw) throw entityError('', 'The request entity is missing', '');
  try {
    const parsed = JSON.parse(raw);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // fall through
  }
  throw new ConnectError(
    400,
    'ENTITY_UNPROCESSABLE',
    'The request entity is not valid JSON',
    'The request body must be a JSON object',
  );
}

// ---------------------------------------------------------------- JSON:API

/** Scheme and host the caller used, for absolute links (Apple's links are absolute). */
export function originOf(ctx: Koa.Context): string {
  return `${ctx.protocol}://${ctx.host}`;
}

export interface Resource {
  type: string;
  id: string;
  attributes?: Record<string, unknown>;
  relationships?: Record<string, unknown>;
  links?: Record<string, string>;
}

/** Sparse fieldsets (`fields[type]=a,b`) applied to attributes and relationships alike. */
export function sparse(r: Resource, query: URLSearchParams): Resource {
  const fields = query.get(`fields[${r.type}]`);
  if (!fields) return r;
  const keep = new Set(fields.split(','));
  const pick = (o?: Record<string, unknown>) =>
    o ? Object.fromEntries(Object.entries(o).filter(([k]) => keep.has(k))) : undefined;
  const out: Resource = { type: r.type, id: r.id };
  const attributes = pick(r.attributes);
  const relationships = pick(r.relationships);
  if (attributes && Object.keys(attributes).length) out.attributes = attributes;
  if (relationships && Object.keys(relationships).length) out.relationships = relationships;
  if (r.links) out.links = r.links;
  return out;
}

export function limitParam(query: URLSearchParams, max: number, dflt = 50): number {
  const raw = query.get('limit');
  if (raw === null) return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > max)
    throw paramError(
      'limit',
      `The value '${raw}' is not valid for 'limit'; it must be an integer between 1 and ${max}`,
    );
  return n;
}

function cursorOffset(query: URLSearchParams): number {
  const raw = query.get('cursor');
  if (!raw) return 0;
  try {
    const o = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as { o?: unknown };
    if (typeof o.o === 'number' && Number.isInteger(o.o) && o.o >= 0) return o.o;
  } catch {
    // fall through
  }
  throw paramError('cursor', `The cursor '${raw}' is not valid`);
}

/** One page of a collection, with Apple's `links.next` cursor and `meta.paging`. */
export function page<T>(
  ctx: Koa.Context,
  items: T[],
  toResource: (item: T) => Resource,
  opts: { max: number; included?: (pageItems: T[]) => Resource[] },
): Record<string, unknown> {
  const query = new URLSearchParams(ctx.querystring);
  const limit = limitParam(query, opts.max);
  const offset = cursorOffset(query);
  const slice = items.slice(offset, offset + limit);
  const self = `${originOf(ctx)}${ctx.path}${ctx.querystring ? `?${ctx.querystring}` : ''}`;
  const links: Record<string, string> = { self };
  if (offset + limit < items.length) {
    const next = new URLSearchParams(query);
    next.set('cursor', Buffer.from(JSON.stringify({ o: offset + limit })).toString('base64url'));
    links.next = `${originOf(ctx)}${ctx.path}?${next}`;
  }
  const doc: Record<string, unknown> = {
    data: slice.map((i) => sparse(toResource(i), query)),
    links,
    meta: { paging: { total: items.length, limit } },
  };
  if (opts.included) {
    const seen = new Set<string>();
    const inc = opts.included(slice).filter((r) => !seen.has(`${r.type}/${r.id}`) && seen.add(`${r.type}/${r.id}`));
    doc.included = inc.map((r) => sparse(r, query));
  }
  return doc;
}

export function single(ctx: Koa.Context, r: Resource, included?: Resource[]): Record<string, unknown> {
  const query = new URLSearchParams(ctx.querystring);
  const doc: Record<string, unknown> = { data: sparse(r, query), links: { self: `${originOf(ctx)}${ctx.path}` } };
  if (included) doc.included = included.map((i) => sparse(i, query));
  return doc;
}

export function includes(ctx: Koa.Context, name: string): boolean {
  return (new URLSearchParams(ctx.querystring).get('include') ?? '').split(',').includes(name);
}

// ---------------------------------------------------------------- request bodies

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => Boolean(v) && typeof v === 'object' && !Array.isArray(v);

/** The `data` of a create/update request, checked for the expected type. */
export function requestData(
  body: Obj,
  type: string,
): { attributes: Obj; relationships: Obj; id?: string; included: Obj[] } {
  const data = body.data;
  if (!isObj(data)) throw entityError('', "The request entity needs a 'data' object", '/data');
  if (data.type !== type)
    throw entityError(
      'INCLUDED.INVALID',
      `The resource type '${String(data.type)}' is not valid here; expected '${type}'`,
      '/data/type',
    );
  return {
    attributes: isObj(data.attributes) ? data.attributes : {},
    relationships: isObj(data.relationships) ? data.relationships : {},
    id: typeof data.id === 'string' ? data.id : undefined,
    included: Array.isArray(body.included) ? body.included.filter(isObj) : [],
  };
}

export function requiredString(attrs: Obj, name: string): string {
  const v = attrs[name];
  if (typeof v !== 'string' || !v.trim())
    throw entityError(
      'ATTRIBUTE.REQUIRED',
      `You must provide a value for the attribute '${name}' with this request`,
      `/data/attributes/${name}`,
    );
  return v;
}

export function enumAttr(attrs: Obj, name: string, allowed: readonly string[], required = false): string | undefined {
  const v = attrs[name];
  if (v === undefined || v === null) {
    if (required)
      throw entityError(
        'ATTRIBUTE.REQUIRED',
        `You must provide a value for the attribute '${name}' with this request`,
        `/data/attributes/${name}`,
      );
    return undefined;
  }
  if (typeof v !== 'string' || !allowed.includes(v)) {
    throw entityError(
      'ATTRIBUTE.INVALID',
      `'${String(v)}' is not a valid value for the attribute '${name}'; allowed: ${allowed.join(', ')}`,
      `/data/attributes/${name}`,
    );
  }
  return v;
}

/** A to-one relationship `{ data: { type, id } }`. */
export function toOne(rels: Obj, name: string, type: string, required = true): string | undefined {
  const rel = rels[name];
  const data = isObj(rel) ? rel.data : undefined;
  if (!isObj(data)) {
    if (!required) return undefined;
    throw entityError(
      'RELATIONSHIP.REQUIRED',
      `You must provide a value for the relationship '${name}' with this request`,
      `/data/relationships/${name}`,
    );
  }
  if (data.type !== type || typeof data.id !== 'string') {
    throw entityError(
      'RELATIONSHIP.INVALID',
      `The relationship '${name}' expects a resource of type '${type}'`,
      `/data/relationships/${name}`,
    );
  }
  return data.id;
}

/** A to-many relationship `{ data: [{ type, id }] }`. */
export function toMany(rels: Obj, name: string, type: string): string[] {
  const rel = rels[name];
  const data = isObj(rel) ? rel.data : undefined;
  if (!Array.isArray(data))
    throw entityError(
      'RELATIONSHIP.REQUIRED',
      `You must provide a value for the relationship '${name}' with this request`,
      `/data/relationships/${name}`,
    );
  return data.map((d, i) => {
    if (!isObj(d) || d.type !== type || typeof d.id !== 'string') {
      throw entityError(
        'RELATIONSHIP.INVALID',
        `The relationship '${name}' expects resources of type '${type}'`,
        `/data/relationships/${name}/data/${i}`,
      );
    }
    return d.id;
  });
}
