import net from 'node:net';

/**
 * The CI client's one way to the service: the public REST API under BILLING_API_URL (ending in
 * /v1) with BILLING_SECRET_KEY as the bearer. Every failure names the API's `error` code, so a
 * CI log says what the service said, not only that something went wrong.
 */

export interface ApiConfig {
  baseUrl: string;
  key: string;
}

/** A failure the command reports and exits 1 on; `code` is the API's `error` code when there is one. */
export class CliFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly body?: Record<string, unknown>,
    readonly status?: number,
    readonly retryAfter?: string,
  ) {
    super(message);
  }
}

/** This machine: the only hosts plain http may carry the secret key to without being told it may. */
function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host === '::1') return true;
  return net.isIPv4(host) && host.startsWith('127.');
}

/**
 * The two variables are the whole configuration (docs/ci.md). A plain-http URL to another host
 * is refused before any request, so the secret key never crosses a network unencrypted, unless
 * `allowInsecure` (`--insecure`) or BILLING_ALLOW_INSECURE=1 says the network is trusted.
 */
export function configFromEnv(env: NodeJS.ProcessEnv = process.env, opts: { allowInsecure?: boolean } = {}): ApiConfig {
  const url = env.BILLING_API_URL?.trim();
  const key = env.BILLING_SECRET_KEY?.trim();
  if (!url)
    throw new CliFailure('missing_configuration', "BILLING_API_URL is not set (the API's base URL, ending in /v1)");
  if (!key) throw new CliFailure('missing_configuration', 'BILLING_SECRET_KEY is not set (a secret key of the tenant)');
  const baseUrl = url.replace(/\/+$/, '');
  if (!/^https?:\/\/.+\/v1$/.test(baseUrl))
    throw new CliFailure('missing_configuration', `BILLING_API_URL must be an http(s) URL ending in /v1 (got ${url})`);
  const { protocol, hostname } = new URL(baseUrl);
  if (protocol === 'http:' && !isLoopbackHost(hostname) && !opts.allowInsecure && env.BILLING_ALLOW_INSECURE !== '1')
    throw new CliFailure(
      'insecure_url',
      `BILLING_API_URL is plain http to ${hostname}, another machine: the secret key would cross the network unencrypted. ` +
        'Use https://, or, on a network you trust, pass --insecure or set BILLING_ALLOW_INSECURE=1.',
    );
  return { baseUrl, key };
}

export interface Reply<T> {
  status: number;
  body: T;
}

/** One request; any answer outside 2xx becomes a CliFailure naming the API's error code. */
export async function request<T = Record<string, unknown>>(
  cfg: ApiConfig,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Reply<T>> {
  // A 429 is the tenant's rate limit: wait what Retry-After says (a few times), as a polite client does.
  for (let attempt = 1; ; attempt++) {
    try {
      return await requestOnce<T>(cfg, method, path, body, headers);
    } catch (e) {
      if (!(e instanceof CliFailure) || e.status !== 429 || attempt >= 4) throw e;
      const seconds = Number(e.retryAfter ?? 1);
      await new Promise((r) => setTimeout(r, Math.min(Number.isFinite(seconds) ? seconds : 1, 30) * 1000));
    }
  }
}

async function requestOnce<T>(
  cfg: ApiConfig,
  method: 'GET' | 'POST',
  path: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<Reply<T>> {
  let res: Response;
  try {
    res = await fetch(cfg.baseUrl + path, {
      method,
      headers: {
        authorization: `Bearer ${cfg.key}`,
        accept: 'application/json',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (e) {
    const cause = (e as { cause?: { code?: string } }).cause?.code ?? (e as Error).message;
    throw new CliFailure('unreachable', `cannot reach ${cfg.baseUrl} (${cause})`);
  }
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // Not JSON (a proxy's error page): the status and the text say what happened.
  }
  const held = res.status === 202 && parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {};
  // A key that requires approval: the write did nothing yet, so a run must not carry on as if it had.
  if (held.object === 'change' && held.status === 'pending_approval')
    throw new CliFailure(
      'pending_approval',
      `${method} ${path} waits for a person's approval: ${String(held.url)} (follow it with GET /v1/changes/${String(held.id)}; use a key without approval for unattended runs)`,
      held,
      res.status,
    );
  if (res.status >= 200 && res.status < 300) return { status: res.status, body: parsed as T };
  const err = (parsed && typeof parsed === 'object' ? parsed : {}) as Record<string, unknown>;
  const code = typeof err.error === 'string' ? err.error : `http_${res.status}`;
  const detail = typeof err.detail === 'string' ? err.detail : text.slice(0, 200) || res.statusText;
  const param = typeof err.param === 'string' ? ` (param ${err.param})` : '';
  throw new CliFailure(
    code,
    `${method} ${path} answered ${res.status}: ${detail}${param}`,
    err,
    res.status,
    res.headers.get('retry-after') ?? undefined,
  );
}

/** Every row of a paged list (limit 200 a page). */
export async function listAll<T>(cfg: ApiConfig, path: string): Promise<T[]> {
  const rows: T[] = [];
  const sep = path.includes('?') ? '&' : '?';
  for (let offset = 0; ; offset += 200) {
    const page = await request<{ data: T[]; pagination: { has_more: boolean } }>(
      cfg,
      'GET',
      `${path}${sep}limit=200&offset=${offset}`,
    );
    rows.push(...page.body.data);
    if (!page.body.pagination.has_more || page.body.data.length === 0) return rows;
  }
}
