import crypto from 'node:crypto';
import { SignJWT } from 'jose';
import { classifyHttpFailure, ProviderRejectedError, ProviderUnreachableError, type ProviderError } from '../errors';
import type { ProviderContext } from '../types';
import { describeNetworkError, PROVIDER } from './errors';
import { operatorHostFetch } from '../../egress/fetch';

/** Apple's production host; the adapter uses ctx.baseUrl, which may be this or the emulator. */
export const APPLE_CONNECT_BASE = 'https://api.appstoreconnect.apple.com';

export interface JsonApiRef {
  type: string;
  id: string;
}

export interface JsonApiResource extends JsonApiRef {
  attributes?: Record<string, unknown>;
  relationships?: Record<string, { data?: JsonApiRef | JsonApiRef[] | null; links?: Record<string, string> }>;
  links?: Record<string, string>;
}

export interface JsonApiDocument {
  data: JsonApiResource | JsonApiResource[] | null;
  included?: JsonApiResource[];
  links?: { self?: string; next?: string };
  meta?: { paging?: { total?: number; limit: number } };
}

export type Query = Record<string, string | number | undefined>;

export interface ConnectClient {
  get(path: string, query?: Query): Promise<JsonApiDocument>;
  /** Every page of a collection, following links.next. */
  list(path: string, query?: Query): Promise<{ data: JsonApiResource[]; included: JsonApiResource[] }>;
  post(path: string, body: unknown): Promise<JsonApiDocument>;
  patch(path: string, body: unknown): Promise<JsonApiDocument>;
}

// Apple rejects Connect tokens that live longer than 20 minutes.
const TOKEN_TTL_S = 15 * 60;

function credentialKey(ctx: ProviderContext): { issuer: string; keyId: string; key: crypto.KeyObject } {
  const { issuer_id: issuer, key_id: keyId, private_key: pem } = ctx.credential;
  if (!issuer || !keyId || !pem)
    throw new ProviderRejectedError(PROVIDER, 'credential needs issuer_id, key_id and private_key');
  try {
    return { issuer, keyId, key: crypto.createPrivateKey(pem) };
  } catch {
    throw new ProviderRejectedError(PROVIDER, 'private_key is not a PKCS#8 PEM P-256 key');
  }
}

/** ES256 bearer token for App Store Connect (and, with bid, the App Store Server API). */
export async function appleBearerToken(ctx: ProviderContext, extra: Record<string, unknown> = {}): Promise<string> {
  const { issuer, keyId, key } = credentialKey(ctx);
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT(extra)
    .setProtectedHeader({ alg: 'ES256', kid: keyId, typ: 'JWT' })
    .setIssuer(issuer)
    .setIssuedAt(now)
    .setExpirationTime(now + TOKEN_TTL_S)
    .setAudience('appstoreconnect-v1')
    .sign(key);
}

function connectFailure(status: number, body: string, retryAfter: string | null): ProviderError {
  let reason = `HTTP ${status}`;
  let code: string | undefined;
  try {
    const err = (JSON.parse(body) as { errors?: { code?: string; title?: string; detail?: string }[] }).errors?.[0];
    if (err) {
      code = err.code;
      reason = [err.code, err.detail ?? err.title].filter(Boolean).join(': ');
    }
  } catch {
    // not JSON: keep the status line
  }
  if (status >= 400 && status < 500 && status !== 429)
    return new ProviderRejectedError(PROVIDER, reason, { status, code });
  return classifyHttpFailure(PROVIDER, status, reason, retryAfter);
}

function withQuery(path: string, query?: Query): string {
  if (!query) return path;
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) qs.set(k, String(v));
  const s = qs.toString();
  return s ? `${path}${path.includes('?') ? '&' : '?'}${s}` : path;
}

export function connectClient(ctx: ProviderContext): ConnectClient {
  const base = ctx.baseUrl.replace(/\/+$/, '');
  const timeoutMs = ctx.timeoutMs ?? 10_000;
  let token: Promise<string> | undefined;

  async function request(method: string, pathAndQuery: string, body?: unknown): Promise<JsonApiDocument> {
    token ??= appleBearerToken(ctx);
    const headers: Record<string, string> = { authorization: `Bearer ${await token}`, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    await ctx.pace?.();
    let res: Response;
    let text: string;
    try {
      res = await operatorHostFetch(base + pathAndQuery, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
      text = await res.text();
    } catch (err) {
      throw new ProviderUnreachableError(PROVIDER, `App Store Connect unreachable: ${describeNetworkError(err)}`);
    }
    if (!res.ok) throw connectFailure(res.status, text, res.headers.get('retry-after'));
    if (!text) return { data: null };
    try {
      return JSON.parse(text) as JsonApiDocument;
    } catch {
      throw new ProviderUnreachableError(PROVIDER, 'App Store Connect answered with a body that is not JSON', {
        status: res.status,
      });
    }
  }

  return {
    get: (path, query) => request('GET', withQuery(path, query)),
    post: (path, body) => request('POST', path, body),
    patch: (path, body) => request('PATCH', path, body),
    async list(path, query) {
      const data: JsonApiResource[] = [];
      const included: JsonApiResource[] = [];
      let next: string | undefined = withQuery(path, query);
      for (let page = 0; next && page < 10_000; page++) {
        const doc: JsonApiDocument = await request('GET', next);
        if (Array.isArray(doc.data)) data.push(...doc.data);
        if (doc.included) included.push(...doc.included);
        // links.next is absolute (Apple's host); keep only path and query so the bearer
        // token only ever goes to the configured base URL.
        next = doc.links?.next ? relativePath(doc.links.next) : undefined;
      }
      return { data, included };
    },
  };
}

function relativePath(link: string): string {
  const u = new URL(link, 'http://placeholder');
  return u.pathname + u.search;
}

export function one(doc: JsonApiDocument): JsonApiResource {
  if (!doc.data || Array.isArray(doc.data))
    throw new ProviderUnreachableError(PROVIDER, 'App Store Connect answered without a resource');
  return doc.data;
}

export function relId(res: JsonApiResource, name: string): string | undefined {
  const d = res.relationships?.[name]?.data;
  return d && !Array.isArray(d) ? d.id : undefined;
}

export function attr<T = string>(res: JsonApiResource, name: string): T | undefined {
  return res.attributes?.[name] as T | undefined;
}
