import http from 'node:http';
import https from 'node:https';
import { AddressRefused, checkLiteralHost, guardedLookup } from './address-guard';

/**
 * The one way out. Every request the service makes to a URL that a tenant, a pasted credential,
 * a provider payload or the operator's configuration names leaves through `egressRequest`:
 *  - the address guard on the addresses the connection really uses (unless the policy allows
 *    private destinations: the operator's own provider hosts, or the operator's switch);
 *  - no redirect is followed: a 3xx is handed back as an answer, never chased;
 *  - the answer is read up to a bound and the whole exchange is bounded in time;
 *  - a failure names its kind and never carries what the remote end said.
 */
export interface EgressPolicy {
  /** Private, loopback and link-local destinations allowed (the operator decided, never a tenant). */
  allowPrivate: boolean;
  /** Bound on the whole exchange: connect, send, answer. */
  timeoutMs: number;
  /** How much of the answer is read. */
  maxResponseBytes: number;
  /** Past the bound: keep what was read (`truncate`) or fail (`fail`, the default). */
  oversize?: 'truncate' | 'fail';
}

export type EgressFailureKind = 'bad_url' | 'refused_address' | 'timeout' | 'connect_failed' | 'too_large' | 'aborted';

export class EgressError extends Error {
  constructor(
    readonly kind: EgressFailureKind,
    message: string,
    /** The system error code (ECONNREFUSED, ENOTFOUND, …): ours, never the remote's words. */
    readonly code?: string,
  ) {
    super(message);
    // Callers written against fetch look at the name to tell a timeout apart.
    this.name = kind === 'timeout' ? 'TimeoutError' : kind === 'aborted' ? 'AbortError' : 'EgressError';
  }
}

export interface EgressCall {
  method: string;
  headers?: Record<string, string>;
  /** A stream is piped (an upload of a file: memory stays flat whatever its size). */
  body?: string | Buffer | NodeJS.ReadableStream;
  /** The caller's own cancellation (beside the policy's time bound). */
  signal?: AbortSignal;
}

export interface EgressAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  truncated: boolean;
}

const FAILURE_TEXT: Record<EgressFailureKind, string> = {
  bad_url: 'the URL is not an http(s) URL',
  refused_address: 'the destination is a private, loopback, link-local or reserved address',
  timeout: 'no answer in time',
  connect_failed: 'could not connect',
  too_large: 'the answer was larger than allowed',
  aborted: 'the request was cancelled',
};

export function egressRequest(target: string | URL, call: EgressCall, policy: EgressPolicy): Promise<EgressAnswer> {
  let url: URL;
  try {
    url = new URL(target);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error();
    checkLiteralHost(url, policy.allowPrivate);
  } catch (e) {
    return Promise.reject(e instanceof AddressRefused ? refused() : new EgressError('bad_url', FAILURE_TEXT.bad_url));
  }
  const timeout = AbortSignal.timeout(policy.timeoutMs);
  const signal = call.signal ? AbortSignal.any([timeout, call.signal]) : timeout;
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<EgressAnswer>((resolve, reject) => {
    let settled = false;
    const fail = (e: EgressError) => {
      if (settled) return;
      settled = true;
      reject(e);
    };
    const req = client.request(
      url,
      {
        method: call.method,
        headers: call.headers,
        lookup: guardedLookup(policy.allowPrivate) as never,
        signal,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const finish = (truncated: boolean) => {
          if (settled) return;
          settled = true;
          const body = Buffer.concat(chunks);
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: truncated ? body.subarray(0, policy.maxResponseBytes) : body,
            truncated,
          });
          res.destroy();
        };
        res.on('data', (c: Buffer) => {
          chunks.push(c);
          size += c.length;
          if (size > policy.maxResponseBytes) {
            if (policy.oversize === 'truncate') finish(true);
            else {
              fail(new EgressError('too_large', FAILURE_TEXT.too_large));
              res.destroy();
            }
          }
        });
        res.on('end', () => finish(false));
        res.on('error', () => fail(failure(signal, undefined)));
      },
    );
    req.on('error', (e) => fail(failure(signal, e)));
    const body = call.body;
    if (body !== undefined && typeof body !== 'string' && !Buffer.isBuffer(body)) {
      body.on('error', () => req.destroy(new Error('the request body could not be read')));
      body.pipe(req);
    } else req.end(body);
  });
}

function refused(): EgressError {
  return new EgressError('refused_address', FAILURE_TEXT.refused_address);
}

function failure(signal: AbortSignal, e: Error | undefined): EgressError {
  if (e instanceof AddressRefused || e?.name === 'AddressRefused') return refused();
  if (signal.aborted) {
    const timedOut = (signal.reason as Error | undefined)?.name === 'TimeoutError';
    return timedOut
      ? new EgressError('timeout', FAILURE_TEXT.timeout)
      : new EgressError('aborted', FAILURE_TEXT.aborted);
  }
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  return new EgressError(
    'connect_failed',
    code ? `${FAILURE_TEXT.connect_failed} (${code})` : FAILURE_TEXT.connect_failed,
    code,
  );
}
