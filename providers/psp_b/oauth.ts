import { ProviderRejectedError, ProviderUnreachableError, classifyHttpFailure } from '../errors';
import type { OAuthConnectResult } from '../types';
import { PROVIDER } from './http';
import { operatorHostFetch, type EgressFetch } from '../../egress/fetch';

/**
 * Paddle has no public OAuth; the psp_b emulator (and any broker standing in for Paddle)
 * serves a Stripe-Connect-style flow whose token endpoint answers
 * { access_token: <API key>, account_id: <seller id>, livemode }.
 */
export async function exchangePaddleOAuthCode(
  baseUrl: string,
  client: { client_id: string; client_secret: string },
  code: string,
  opts: { fetch?: EgressFetch; timeoutMs?: number } = {},
): Promise<OAuthConnectResult> {
  const body = new URLSearchParams({
    grant_type: 'authorization_code',
    code,
    client_id: client.client_id,
    client_secret: client.client_secret,
  });
  let res: Response;
  try {
    res = await (opts.fetch ?? operatorHostFetch)(`${baseUrl.replace(/\/+$/, '')}/oauth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
      body,
      signal: AbortSignal.timeout(opts.timeoutMs ?? 10_000),
    });
  } catch (err) {
    throw new ProviderUnreachableError(PROVIDER, `token exchange failed: ${(err as Error).name}`);
  }
  const json = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (!res.ok) {
    const reason = `${String(json.error ?? `HTTP ${res.status}`)}${json.error_description ? `: ${String(json.error_description)}` : ''}`;
    if (res.status >= 400 && res.status < 500 && res.status !== 429) {
      throw new ProviderRejectedError(PROVIDER, reason, {
        status: res.status,
        code: typeof json.error === 'string' ? json.error : undefined,
      });
    }
    throw classifyHttpFailure(PROVIDER, res.status, reason, res.headers.get('retry-after'));
  }
  if (typeof json.access_token !== 'string' || typeof json.account_id !== 'string') {
    throw new ProviderRejectedError(PROVIDER, 'token response lacks access_token or account_id', {
      status: res.status,
    });
  }
  return {
    account_ref: json.account_id,
    credential: { api_key: json.access_token },
    mode: json.livemode === true ? 'live' : 'test',
  };
}
