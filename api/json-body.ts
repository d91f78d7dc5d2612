import type Koa from 'koa';
import { ApiError, invalidRequest } from '../operations/errors';

export const MAX_BODY_BYTES = 1024 * 1024;

/** Read the raw body (kept for signature checks) with a size cap; 413 past it. */
export async function readRawBody(ctx: Koa.Context, limit = MAX_BODY_BYTES): Promise<Buffer> {
  const declared = Number(ctx.get('content-length') || 0);
  if (declared > limit) throw new ApiError(413, 'payload_too_large', `Request body exceeds ${limit} bytes.`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new ApiError(413, 'payload_too_large', `Request body exceeds ${limit} bytes.`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** A JSON object body; empty means {}. Anything else is 400 invalid_request. */
export async function readJsonObject(ctx: Koa.Context): Promise<Record<string, unknown>> {
  const raw = await readRawBody(ctx);
  if (raw.length === 0) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString('utf8'));
  } catch {
    throw invalidRequest('body is not valid JSON');
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw invalidRequest('body must be a JSON object');
  return parsed as Record<string, unknown>;
}
