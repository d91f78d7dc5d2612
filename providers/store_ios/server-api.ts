import crypto from 'node:crypto';
import { AppStoreServerAPIClient, Environment } from '@apple/app-store-server-library';
import { ProviderRejectedError } from '../errors';
import type { Mode, ProviderContext } from '../types';
import { APPLE_CONNECT_BASE } from './connect';
import { PROVIDER, serverApiFailure } from './errors';
import { operatorHostFetch } from '../../egress/fetch';

/** Apple's own Server API hosts (the library hard-codes the same two). */
export const APPLE_SERVER_API_BASE: Record<'Production' | 'Sandbox', string> = {
  Production: 'https://api.storekit.itunes.apple.com',
  Sandbox: 'https://api.storekit-sandbox.itunes.apple.com',
};

export function environmentFor(mode: Mode): Environment {
  return mode === 'live' ? Environment.PRODUCTION : Environment.SANDBOX;
}

/**
 * The official client picks its host from the Environment and keeps it private. Its one
 * extension point is the protected `makeFetchRequest(path, query, …)`, so this subclass
 * overrides only that: same path, query, headers (the library's own ES256 bearer token) and
 * body, sent to a configurable base URL with a timeout, and it remembers Retry-After, which
 * the library's APIException does not carry. Everything else — token, paths, response
 * validation, APIException — stays the library's.
 */
export class ConfigurableServerAPIClient extends AppStoreServerAPIClient {
  lastRetryAfter: string | null = null;

  constructor(
    signingKey: string,
    keyId: string,
    issuerId: string,
    bundleId: string,
    environment: Environment,
    private readonly hostBase: string,
    private readonly requestTimeoutMs: number,
  ) {
    super(signingKey, keyId, issuerId, bundleId, environment);
  }

  // The base declares node-fetch's Response; the WHATWG Response has every member it reads (ok, status, json()).
  protected override async makeFetchRequest(
    path: string,
    query: URLSearchParams,
    method: string,
    body: string | Buffer | undefined,
    headers: Record<string, string>,
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
  ): Promise<any> {
    const res = await operatorHostFetch(`${this.hostBase}${path}?${query}`, {
      method,
      body: body as BodyInit | undefined,
      headers,
      signal: AbortSignal.timeout(this.requestTimeoutMs),
    });
    this.lastRetryAfter = res.headers.get('retry-after');
    return res;
  }
}

/**
 * Where Server API calls go: an explicit override, else Apple's hosts when ctx.baseUrl is
 * Apple's Connect host, else ctx.baseUrl itself (the emulator serves both APIs on one port).
 */
export function serverApiBase(ctx: ProviderContext, override?: string | ((mode: Mode) => string)): string {
  if (typeof override === 'function') return override(ctx.mode).replace(/\/+$/, '');
  if (override) return override.replace(/\/+$/, '');
  const base = ctx.baseUrl.replace(/\/+$/, '');
  if (base === APPLE_CONNECT_BASE) return APPLE_SERVER_API_BASE[ctx.mode === 'live' ? 'Production' : 'Sandbox'];
  return base;
}

export function bundleIdOf(ctx: ProviderContext): string {
  const bundleId = ctx.accountRef || ctx.credential.bundle_id;
  if (!bundleId) throw new ProviderRejectedError(PROVIDER, 'no bundle id: set the connection account (bundle id)');
  return bundleId;
}

export function serverApiClient(
  ctx: ProviderContext,
  override?: string | ((mode: Mode) => string),
): ConfigurableServerAPIClient {
  const { issuer_id, key_id, private_key } = ctx.credential;
  if (!issuer_id || !key_id || !private_key)
    throw new ProviderRejectedError(PROVIDER, 'credential needs issuer_id, key_id and private_key');
  try {
    // the library would fail later, inside its request, looking like a network error
    crypto.createPrivateKey(private_key);
  } catch {
    throw new ProviderRejectedError(PROVIDER, 'private_key is not a PKCS#8 PEM P-256 key');
  }
  return new ConfigurableServerAPIClient(
    private_key,
    key_id,
    issuer_id,
    bundleIdOf(ctx),
    environmentFor(ctx.mode),
    serverApiBase(ctx, override),
    ctx.timeoutMs ?? 10_000,
  );
}

/** Run one library call, mapping whatever it throws into our error classes. */
export async function callServerApi<T>(
  client: ConfigurableServerAPIClient,
  fn: (c: ConfigurableServerAPIClient) => Promise<T>,
): Promise<T> {
  try {
    return await fn(client);
  } catch (err) {
    throw serverApiFailure(err, client.lastRetryAfter);
  }
}
