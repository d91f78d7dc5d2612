import crypto from 'node:crypto';
import Stripe from 'stripe';
import { providerKeyMode } from '../../domain/keys';
import type { ProviderContext } from '../types';
import { rejected } from './errors';

export interface PspAOptions {
  /** Default per-call timeout when the context gives none (ms). */
  timeoutMs?: number;
  /** Observe every HTTP exchange the adapter makes (contract tests, metrics). Never sees bodies. */
  onResponse?: (event: {
    method: string;
    path: string;
    status: number;
    idempotency_key?: string;
    elapsed: number;
  }) => void;
}

const DEFAULT_TIMEOUT_MS = 10_000;
const MAX_CLIENTS = 64;

/** The secret key's own mode, so a test key is never used for a live run (or the reverse). */
export function keyMode(secretKey: string): 'live' | 'test' | undefined {
  return providerKeyMode('psp_a', secretKey) ?? undefined;
}

/**
 * One configured stripe-node client per (base URL, key, connected account, timeout),
 * reused across calls so keep-alive sockets and the SDK's setup cost are paid once.
 * Retries are off: Temporal activities own the retry policy.
 */
export function createClientCache(opts: PspAOptions) {
  const clients = new Map<string, Stripe>();
  return (ctx: ProviderContext): Stripe => {
    const secret = ctx.credential?.secret_key;
    if (!secret) throw rejected('credential has no secret_key', 'credential_missing');
    const mode = keyMode(secret);
    if (mode && mode !== ctx.mode)
      throw rejected(
        `credential is a ${mode}-mode key but the call is for ${ctx.mode} mode`,
        'credential_mode_mismatch',
      );
    const timeout = ctx.timeoutMs ?? opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const fingerprint = crypto.createHash('sha256').update(secret).digest('hex');
    // A paced client waits for the sync's pacer before each request; the same key, mode and
    // account always meet the same pacer allowance, so caching the first one is right.
    const cacheKey = `${ctx.baseUrl}|${fingerprint}|${ctx.accountRef}|${timeout}|${ctx.pace ? 'paced' : ''}`;
    const hit = clients.get(cacheKey);
    if (hit) {
      clients.delete(cacheKey);
      clients.set(cacheKey, hit);
      return hit;
    }
    const url = new URL(ctx.baseUrl);
    const protocol = url.protocol === 'http:' ? 'http' : 'https';
    const stripe = new Stripe(secret, {
      host: url.hostname,
      port: url.port || (protocol === 'http' ? 80 : 443),
      protocol,
      stripeAccount: ctx.accountRef || undefined,
      maxNetworkRetries: 0,
      timeout,
      telemetry: false,
      appInfo: { name: 'billing-service' },
      ...(ctx.pace ? { httpClient: pacedHttpClient(ctx.pace) } : {}),
    });
    if (opts.onResponse) {
      const observe = opts.onResponse;
      stripe.on('response', (e: Stripe.ResponseEvent) =>
        observe({
          method: e.method,
          path: e.path,
          status: e.status,
          idempotency_key: e.idempotency_key,
          elapsed: e.elapsed,
        }),
      );
    }
    clients.set(cacheKey, stripe);
    if (clients.size > MAX_CLIENTS) clients.delete(clients.keys().next().value!);
    return stripe;
  };
}

/** stripe-node's own Node HTTP client, made to wait for the pacer before every request. */
function pacedHttpClient(pace: () => Promise<void>): Stripe.HttpClient {
  const base = Stripe.createNodeHttpClient();
  const paced = Object.create(base) as Stripe.HttpClient;
  paced.makeRequest = async (...args: Parameters<Stripe.HttpClient['makeRequest']>) => {
    await pace();
    return base.makeRequest(...args);
  };
  return paced;
}
