import { egressRequest, type EgressPolicy } from './request';

/**
 * `fetch`'s shape over `egressRequest`, for provider code written against fetch (and for the
 * client libraries that take a fetch). Redirects are never followed whatever `init.redirect`
 * says; failures are EgressErrors (a timeout is named `TimeoutError`, as fetch names it).
 */
export type EgressFetch = (input: string | URL, init?: RequestInit) => Promise<Response>;

/** Statuses whose Response must have no body. */
const NULL_BODY = new Set([101, 204, 205, 304]);

export function egressFetch(policy: EgressPolicy): EgressFetch {
  return async (input, init = {}) => {
    const answer = await egressRequest(
      input,
      {
        method: init.method ?? 'GET',
        headers: headerRecord(init.headers),
        body: bodyOf(init.body),
        signal: init.signal ?? undefined,
      },
      policy,
    );
    const headers = new Headers();
    for (const [name, value] of Object.entries(answer.headers)) {
      if (value === undefined) continue;
      for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
    }
    // 1xx never reaches here (node handles them); anything outside Response's range is a bad answer.
    const status = answer.status >= 200 && answer.status <= 599 ? answer.status : 502;
    return new Response(NULL_BODY.has(status) ? null : new Uint8Array(answer.body), { status, headers });
  };
}

function headerRecord(h: HeadersInit | undefined): Record<string, string> | undefined {
  if (!h) return undefined;
  const out: Record<string, string> = {};
  new Headers(h).forEach((value, name) => {
    out[name] = value;
  });
  return out;
}

function bodyOf(body: BodyInit | null | undefined): string | Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return body;
  if (body instanceof URLSearchParams) return body.toString();
  if (Buffer.isBuffer(body)) return body;
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  if (ArrayBuffer.isView(body)) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  throw new TypeError('egressFetch sends string, URLSearchParams or byte bodies only');
}

/**
 * Hosts the operator configured (`*_API_BASE`): private addresses allowed (the emulators, a
 * proxy), still no redirects, bounded answers. Never for a URL a tenant or a payload supplies.
 */
export const operatorHostFetch: EgressFetch = egressFetch({
  allowPrivate: true,
  timeoutMs: 60_000,
  maxResponseBytes: 32 * 1024 * 1024,
});
