import crypto from 'node:crypto';
import { androidpublisher, type androidpublisher_v3 } from '@googleapis/androidpublisher';
import type { ProviderContext } from '../types';
import { parseServiceAccount, serviceAccountClient } from './auth';
import { toProviderError } from './failures';

export type Play = androidpublisher_v3.Androidpublisher;

const DEFAULT_TIMEOUT_MS = 10_000;
const MAX_CLIENTS = 64;
/**
 * Clients keyed by (base URL, timeout, credential digest), so an access token is reused
 * across calls until it expires. Only a cache: losing it costs one token request.
 */
const clients = new Map<string, Play>();

export function playClient(ctx: ProviderContext): Play {
  const timeout = ctx.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const json = ctx.credential.service_account_json;
  const key = crypto
    .createHash('sha256')
    .update(`${ctx.baseUrl}\n${timeout}\n${json ?? ''}`)
    .digest('hex');
  const hit = clients.get(key);
  if (hit) return hit;
  const sa = parseServiceAccount(json, ctx.baseUrl);
  const api = androidpublisher({
    version: 'v3',
    auth: serviceAccountClient(sa, timeout, ctx.baseUrl),
    rootUrl: `${ctx.baseUrl.replace(/\/+$/, '')}/`,
    // Temporal owns retries: the client must not retry 5xx/429 on its own.
    retry: false,
    timeout,
  });
  if (clients.size >= MAX_CLIENTS) clients.delete(clients.keys().next().value as string);
  clients.set(key, api);
  return api;
}

/** Run one Play call (paced when the context says so) and return its body; every failure leaves as a ProviderError. */
export async function call<T>(ctx: Pick<ProviderContext, 'pace'>, fn: () => Promise<{ data: T }>): Promise<T> {
  await ctx.pace?.();
  try {
    return (await fn()).data;
  } catch (err) {
    throw toProviderError(err);
  }
}
