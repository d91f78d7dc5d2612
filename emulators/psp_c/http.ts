import type Koa from 'koa';
import { badRequest } from './errors';

/**
 * Request plumbing shared by the psp_c emulator's routes: body parsing (Razorpay accepts
 * JSON and form bodies; its SDKs send both), count/skip collections and the internal
 * fields every stored object carries.
 */

export async function readRaw(ctx: Koa.Context): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of ctx.req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** `notes[key]=v` → { notes: { key: v } } (one level, as Razorpay's form bodies use). */
export function parseForm(raw: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of new URLSearchParams(raw)) {
    const m = /^([^[\]]+)\[([^[\]]*)\]$/.exec(k);
    if (!m) {
      out[k] = v;
    } else if (m[2] === '') {
      const arr = (out[m[1]] ??= []) as unknown[];
      arr.push(v);
    } else {
      const obj = (out[m[1]] ??= {}) as Record<string, unknown>;
      obj[m[2]] = v;
    }
  }
  return out;
}

export async function readBody(ctx: Koa.Context): Promise<Record<string, unknown>> {
  const raw = await readRaw(ctx);
  if (!raw.trim()) return {};
  const type = String(ctx.get('content-type') || '');
  if (type.includes('application/x-www-form-urlencoded')) return parseForm(raw);
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw badRequest('The request body is not valid JSON');
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw badRequest('The request body must be a JSON object');
  return parsed as Record<string, unknown>;
}

/** Stored objects keep who owns them in `_account`/`_mode`; the API never shows those. */
export type Stored = Record<string, unknown> & { _account: string; _mode: 'test' | 'live' };

export function view(o: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (!k.startsWith('_')) out[k] = v;
  return out;
}

/** Razorpay pagination: `count` (default 10, at most 100) and `skip`, newest first. */
export function page<T extends Record<string, unknown>>(ctx: Koa.Context, rows: T[]): T[] {
  const count = intParam(ctx.query.count, 'count', 10);
  const skip = intParam(ctx.query.skip, 'skip', 0);
  if (count < 1 || count > 100) throw badRequest('The count must be between 1 and 100.', 'count');
  if (skip < 0) throw badRequest('The skip must be at least 0.', 'skip');
  const sorted = [...rows].sort((a, b) => Number(b._seq ?? 0) - Number(a._seq ?? 0));
  return sorted.slice(skip, skip + count);
}

export function collection(ctx: Koa.Context, rows: Record<string, unknown>[]) {
  const items = page(ctx, rows).map(view);
  return { entity: 'collection', count: items.length, items };
}

function intParam(raw: unknown, name: string, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n)) throw badRequest(`The ${name} must be an integer.`, name);
  return n;
}

/** Reject fields Razorpay does not take, in its words. */
export function onlyFields(body: Record<string, unknown>, allowed: readonly string[]): void {
  const extra = Object.keys(body).filter((k) => !allowed.includes(k));
  if (extra.length) throw badRequest(`${extra.join(', ')} is/are not required and should not be sent`, extra[0]);
}

export function requireString(body: Record<string, unknown>, field: string, max = 2048): string {
  const v = body[field];
  if (typeof v !== 'string' || !v.trim()) throw badRequest(`The ${field} field is required.`, field);
  if (v.length > max) throw badRequest(`The ${field} may not be greater than ${max} characters.`, field);
  return v;
}

export function requireAmount(body: Record<string, unknown>, field = 'amount'): number {
  const v = typeof body[field] === 'string' ? Number(body[field]) : body[field];
  if (v === undefined || v === null || v === '') throw badRequest(`The ${field} field is required.`, field);
  if (typeof v !== 'number' || !Number.isInteger(v)) throw badRequest(`The ${field} must be an integer.`, field);
  if (v < 100)
    throw badRequest(
      `The amount must be atleast ${typeof body.currency === 'string' ? body.currency : 'INR'} 1.00`,
      field,
    );
  return v;
}

export function currencyOf(body: Record<string, unknown>, fallback?: string): string {
  const v = body.currency ?? fallback;
  if (typeof v !== 'string' || !/^[A-Z]{3}$/.test(v))
    throw badRequest('The currency must be a valid ISO 4217 code.', 'currency');
  return v;
}

/** Notes: at most 15 string/number pairs, 256 characters each. */
export function notesOf(body: Record<string, unknown>): Record<string, string | number> {
  const n = body.notes;
  if (n === undefined || n === null || (Array.isArray(n) && n.length === 0)) return {};
  if (typeof n !== 'object' || Array.isArray(n)) throw badRequest('The notes must be an object.', 'notes');
  const entries = Object.entries(n as Record<string, unknown>);
  if (entries.length > 15) throw badRequest('Number of fields in notes should be less than or equal to 15', 'notes');
  const out: Record<string, string | number> = {};
  for (const [k, v] of entries) {
    if (typeof v !== 'string' && typeof v !== 'number')
      throw badRequest(`notes.${k} must be a string or number`, 'notes');
    if (String(v).length > 256) throw badRequest('The notes value may not be greater than 256 characters.', 'notes');
    out[k] = v;
  }
  return out;
}

/** A tiny method+path router: Razorpay's surface is small and flat. */
export type Handler = (ctx: Koa.Context, params: Record<string, string>) => Promise<unknown> | unknown;
export interface Route {
  method: string;
  re: RegExp;
  keys: string[];
  handler: Handler;
}

export function route(method: string, pattern: string, handler: Handler): Route {
  const keys: string[] = [];
  const re = new RegExp(
    `^${pattern.replace(/:(\w+)/g, (_, k: string) => {
      keys.push(k);
      return '([^/]+)';
    })}/?$`,
  );
  return { method, re, keys, handler };
}

export function match(
  routes: Route[],
  method: string,
  path: string,
): { route: Route; params: Record<string, string> } | null {
  for (const r of routes) {
    if (r.method !== method) continue;
    const m = r.re.exec(path);
    if (!m) continue;
    const params: Record<string, string> = {};
    r.keys.forEach((k, i) => (params[k] = decodeURIComponent(m[i + 1])));
    return { route: r, params };
  }
  return null;
}
