import { classifyHttpFailure, ProviderRejectedError, type ProviderError } from '../errors';
import { providerKeyMode } from '../../domain/keys';
import type { Mode, ProviderContext, ProviderCredential } from '../types';
import { operatorHostFetch, type EgressFetch } from '../../egress/fetch';

export const PROVIDER = 'psp_c';
const DEFAULT_TIMEOUT_MS = 10_000;
/** Razorpay's largest page (`count` ≤ 100). */
const PAGE = 100;

export interface PspCOptions {
  /** Injected fetch (tests, proxies); defaults to the global one. */
  fetch?: EgressFetch;
  /** Default per-call timeout when the context names none. */
  timeoutMs?: number;
  /**
   * Where the partner OAuth endpoints live: https://auth.razorpay.com at Razorpay; `<baseUrl>/oauth` by default (the
   * emulator).
   */
  oauthBaseUrl?: string;
}

/** rzp_test_… / rzp_live_… key ids (and OAuth public tokens rzp_test_oauth_…) carry their mode. */
export function credentialMode(cred: ProviderCredential): Mode | null {
  return providerKeyMode('psp_c', cred.key_id || cred.public_token || '');
}

/** Basic key_id:key_secret for a merchant's own keys; Bearer for a partner's OAuth access token. */
function authorization(cred: ProviderCredential): string {
  if (cred.access_token) return `Bearer ${cred.access_token}`;
  if (!cred.key_id || !cred.key_secret)
    throw new ProviderRejectedError(PROVIDER, 'credential lacks key_id and key_secret', {
      code: 'credential_incomplete',
    });
  return `Basic ${Buffer.from(`${cred.key_id}:${cred.key_secret}`).toString('base64')}`;
}

/** Razorpay's `{error: {code, description, field}}`, or whatever a proxy answered, as a reason without secrets. */
function failureReason(status: number, text: string): { reason: string; code?: string; field?: string } {
  try {
    const body = JSON.parse(text) as {
      error?: { code?: string; description?: string; message?: string; field?: string };
    };
    const e = body.error;
    if (e && typeof e === 'object') {
      const what = e.description || e.message || e.code || 'error';
      return {
        reason: `${what}${e.field ? ` (field ${e.field})` : ''} [HTTP ${status}]`,
        code: e.code,
        field: e.field,
      };
    }
  } catch {
    // not JSON: fall through
  }
  return { reason: `HTTP ${status}${text ? `: ${text.slice(0, 200)}` : ''}` };
}

function networkReason(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return `no answer within ${timeoutMs} ms`;
  return `connection failed: ${e?.cause?.code ?? e?.cause?.message ?? e?.message ?? 'unknown error'}`;
}

export type Query = Record<string, string | number | undefined>;

/** Raw HTTP with Razorpay's error envelope mapped onto the three error classes. */
export async function httpJson<T>(
  fetchImpl: EgressFetch,
  url: string,
  init: { method: string; headers: Record<string, string>; body?: unknown; timeoutMs: number },
): Promise<T> {
  let res: Response;
  let text: string;
  try {
    res = await fetchImpl(url, {
      method: init.method,
      headers: {
        accept: 'application/json',
        ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...init.headers,
      },
      body: init.body !== undefined ? JSON.stringify(init.body) : undefined,
      signal: AbortSignal.timeout(init.timeoutMs),
    });
    text = await res.text();
  } catch (err) {
    throw classifyHttpFailure(PROVIDER, undefined, networkReason(err, init.timeoutMs));
  }
  if (!res.ok) {
    const { reason, code, field } = failureReason(res.status, text);
    if (res.status >= 500 || res.status === 429)
      throw classifyHttpFailure(PROVIDER, res.status, reason, res.headers.get('retry-after'));
    const err: ProviderError = new ProviderRejectedError(PROVIDER, reason, { status: res.status, code });
    (err as ProviderError & { field?: string }).field = field;
    throw err;
  }
  if (!text) return undefined as T;
  try {
    return JSON.parse(text) as T;
  } catch {
    throw classifyHttpFailure(PROVIDER, 502, 'answer was not JSON');
  }
}

/** One connected account, one mode: authenticated calls to the Razorpay API. */
export class RazorpayClient {
  private readonly fetchImpl: EgressFetch;
  private readonly timeoutMs: number;

  constructor(
    private readonly ctx: ProviderContext,
    opts: PspCOptions = {},
  ) {
    this.fetchImpl = opts.fetch ?? operatorHostFetch;
    this.timeoutMs = ctx.timeoutMs ?? opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const keyMode = credentialMode(ctx.credential);
    // A test key would silently write test objects for a live sync (and the reverse): refuse.
    if (keyMode && keyMode !== ctx.mode) {
      throw new ProviderRejectedError(
        PROVIDER,
        `credential is a ${keyMode}-mode key but the call is for ${ctx.mode} mode`,
        { code: 'credential_mode_mismatch' },
      );
    }
  }

  async call<T>(method: string, path: string, opts: { query?: Query; body?: unknown } = {}): Promise<T> {
    await this.ctx.pace?.();
    const url = new URL(path, this.ctx.baseUrl.endsWith('/') ? this.ctx.baseUrl : `${this.ctx.baseUrl}/`);
    for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    return httpJson<T>(this.fetchImpl, url.toString(), {
      method,
      headers: { authorization: authorization(this.ctx.credential) },
      body: opts.body,
      timeoutMs: this.timeoutMs,
    });
  }

  /** Every row of a count/skip list. `pick` reads the rows (collections use `items`; payment links `payment_links`). */
  async listAll<T>(
    path: string,
    query: Query = {},
    pick: (page: Record<string, unknown>) => unknown = (p) => p.items,
  ): Promise<T[]> {
    const out: T[] = [];
    for (let skip = 0; skip < 100_000; skip += PAGE) {
      const page = await this.call<Record<string, unknown>>('GET', path, { query: { ...query, count: PAGE, skip } });
      const rows = (pick(page) as T[] | undefined) ?? [];
      out.push(...rows);
      if (rows.length < PAGE) break;
    }
    return out;
  }
}

/** Razorpay answers an unknown id with 400 "The id provided does not exist". */
export function isNoSuchId(err: unknown): boolean {
  return err instanceof ProviderRejectedError && /does not exist/i.test(err.reason);
}

export function fieldOf(err: unknown): string | undefined {
  return (err as { field?: string }).field;
}
