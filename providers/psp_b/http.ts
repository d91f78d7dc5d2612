import { ProviderRejectedError, ProviderUnreachableError, classifyHttpFailure } from '../errors';
import { providerKeyMode } from '../../domain/keys';
import type { ProviderContext } from '../types';
import { operatorHostFetch, type EgressFetch } from '../../egress/fetch';

export const PROVIDER = 'psp_b';
const DEFAULT_TIMEOUT_MS = 10_000;
const MAX_PAGES = 10_000;

export interface PaddleEnvelope<T> {
  data: T;
  meta?: {
    request_id?: string;
    pagination?: { per_page: number; next: string; has_more: boolean; estimated_total?: number };
  };
}

interface PaddleErrorBody {
  error?: {
    type?: string;
    code?: string;
    detail?: string;
    message?: string;
    errors?: { field: string; message: string }[];
  };
}

export interface HttpOptions {
  fetch?: EgressFetch;
  timeoutMs?: number;
}

/**
 * Paddle API keys name their environment (pdl_sdbx_apikey_… / pdl_live_apikey_…). A key
 * for the other environment would reach the wrong catalogue, so refuse it before calling.
 * Keys in Paddle's older format carry no prefix and pass.
 */
function checkCredential(ctx: ProviderContext): string {
  const key = ctx.credential.api_key;
  if (!key) throw new ProviderRejectedError(PROVIDER, 'credential has no api_key', { code: 'missing_credential' });
  const keyMode = providerKeyMode('psp_b', key);
  if (keyMode && keyMode !== ctx.mode) {
    throw new ProviderRejectedError(
      PROVIDER,
      `API key is for the ${keyMode === 'test' ? 'sandbox' : 'live'} environment, connection mode is ${ctx.mode}`,
      {
        code: 'credential_mode_mismatch',
      },
    );
  }
  return key;
}

function failureReason(status: number, body: PaddleErrorBody | undefined): { reason: string; code?: string } {
  const e = body?.error;
  if (!e) return { reason: `HTTP ${status}` };
  const fields = e.errors?.length ? ` (${e.errors.map((f) => `${f.field}: ${f.message}`).join('; ')})` : '';
  const text = e.detail ?? e.message ?? `HTTP ${status}`;
  return { reason: `${e.code ? `${e.code}: ` : ''}${text}${fields}`, code: e.code };
}

/** One Paddle API call: Bearer auth, Paddle-Version 1, JSON both ways, errors in the three classes. */
export async function paddleRequest<T>(
  ctx: ProviderContext,
  method: 'GET' | 'POST' | 'PATCH',
  path: string,
  opts: HttpOptions & { query?: URLSearchParams | Record<string, string>; body?: unknown } = {},
): Promise<PaddleEnvelope<T>> {
  const key = checkCredential(ctx);
  const qs = opts.query ? new URLSearchParams(opts.query).toString() : '';
  const url = `${ctx.baseUrl.replace(/\/+$/, '')}${path}${qs ? `?${qs}` : ''}`;
  const timeoutMs = ctx.timeoutMs ?? opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const doFetch = opts.fetch ?? operatorHostFetch;
  await ctx.pace?.();
  let res: Response;
  try {
    res = await doFetch(url, {
      method,
      headers: {
        Authorization: `Bearer ${key}`,
        'Paddle-Version': '1',
        Accept: 'application/json',
        ...(opts.body !== undefined ? { 'Content-Type': 'application/json' } : {}),
      },
      body: opts.body !== undefined ? JSON.stringify(opts.body) : undefined,
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    const name = (err as Error).name;
    const reason =
      name === 'TimeoutError' || name === 'AbortError'
        ? `${method} ${path} timed out after ${timeoutMs} ms`
        : `${method} ${path} failed: ${networkCause(err)}`;
    throw new ProviderUnreachableError(PROVIDER, reason);
  }
  let text: string;
  try {
    text = await res.text();
  } catch (err) {
    throw new ProviderUnreachableError(PROVIDER, `${method} ${path} response broke off: ${networkCause(err)}`, {
      status: res.status,
    });
  }
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!res.ok) {
    const { reason, code } = failureReason(res.status, parsed as PaddleErrorBody | undefined);
    if (res.status >= 400 && res.status < 500 && res.status !== 429) {
      throw new ProviderRejectedError(PROVIDER, reason, { status: res.status, code });
    }
    throw classifyHttpFailure(PROVIDER, res.status, reason, res.headers.get('retry-after'));
  }
  if (!parsed || typeof parsed !== 'object' || !('data' in parsed)) {
    throw new ProviderUnreachableError(PROVIDER, `${method} ${path} answered ${res.status} without a Paddle envelope`, {
      status: res.status,
    });
  }
  return parsed as PaddleEnvelope<T>;
}

function networkCause(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err as Error).message ?? 'network error';
}

/**
 * Every entity of a list endpoint. Paddle's `meta.pagination.next` is an absolute URL on
 * Paddle's host; only its query (the original filters plus `after`) is reused, so the
 * calls stay on ctx.baseUrl whatever host the provider writes into `next`.
 */
export async function paddleListAll<T>(
  ctx: ProviderContext,
  path: string,
  query: Record<string, string>,
  opts: HttpOptions = {},
): Promise<T[]> {
  const out: T[] = [];
  let params = new URLSearchParams(query);
  for (let page = 0; page < MAX_PAGES; page++) {
    const res = await paddleRequest<T[]>(ctx, 'GET', path, { ...opts, query: params });
    out.push(...res.data);
    const p = res.meta?.pagination;
    if (!p?.has_more || !p.next || res.data.length === 0) return out;
    const next = new URL(p.next, 'http://paddle.invalid').searchParams;
    if (next.get('after') === params.get('after')) return out;
    params = next;
  }
  throw new ProviderUnreachableError(PROVIDER, `${path} did not finish paging after ${MAX_PAGES} pages`);
}
