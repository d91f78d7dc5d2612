import type { OAuthConnectResult } from '../types';
import { credentialMode, httpJson, type PspCOptions } from './client';
import { operatorHostFetch } from '../../egress/fetch';

/**
 * Razorpay partner OAuth token exchange: POST <auth>/token with client_id,
 * client_secret, grant_type=authorization_code, code (and redirect_uri, mode when known).
 * The public token's rzp_test_oauth_/rzp_live_oauth_ prefix names the mode granted.
 */
interface TokenAnswer {
  access_token: string;
  public_token: string;
  refresh_token: string;
  razorpay_account_id: string;
  expires_in: number;
  token_type: string;
}

export async function exchangeCode(
  baseUrl: string,
  client: { client_id: string; client_secret: string },
  code: string,
  opts: PspCOptions & { redirect_uri?: string; mode?: 'test' | 'live' } = {},
): Promise<OAuthConnectResult> {
  const authBase = (opts.oauthBaseUrl ?? `${baseUrl.replace(/\/$/, '')}/oauth`).replace(/\/$/, '');
  const answer = await httpJson<TokenAnswer>(opts.fetch ?? operatorHostFetch, `${authBase}/token`, {
    method: 'POST',
    headers: {},
    body: {
      client_id: client.client_id,
      client_secret: client.client_secret,
      grant_type: 'authorization_code',
      code,
      redirect_uri: opts.redirect_uri,
      mode: opts.mode,
    },
    timeoutMs: opts.timeoutMs ?? 10_000,
  });
  const credential = {
    access_token: answer.access_token,
    refresh_token: answer.refresh_token,
    public_token: answer.public_token,
  };
  return {
    account_ref: answer.razorpay_account_id,
    credential,
    mode: credentialMode(credential) ?? opts.mode ?? 'live',
  };
}
