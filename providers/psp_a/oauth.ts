import Stripe from 'stripe';
import type { OAuthConnectResult } from '../types';
import { rejected, toProviderError } from './errors';

/**
 * Stripe Connect OAuth: POST /oauth/token on the connect host with the platform's secret
 * key. With a custom host, stripe-node sends connect calls to that same host, so the
 * emulator (or connect.stripe.com, when baseUrl is left at Stripe) answers.
 * The answer's stripe_user_id is the connected account; its access_token the credential.
 */
export async function exchangeCode(
  baseUrl: string,
  client: { client_id: string; client_secret: string },
  code: string,
  timeoutMs: number,
): Promise<OAuthConnectResult> {
  if (!client.client_secret) throw rejected('client_secret missing', 'credential_missing');
  const url = new URL(baseUrl);
  const protocol = url.protocol === 'http:' ? 'http' : 'https';
  const custom = url.hostname !== 'api.stripe.com';
  const stripe = new Stripe(client.client_secret, {
    ...(custom ? { host: url.hostname, port: url.port || (protocol === 'http' ? 80 : 443), protocol } : {}),
    maxNetworkRetries: 0,
    timeout: timeoutMs,
    telemetry: false,
  });
  let token: Stripe.OAuthToken;
  try {
    token = await stripe.oauth.token({ grant_type: 'authorization_code', code });
  } catch (err) {
    throw toProviderError(err);
  }
  if (!token.stripe_user_id || !token.access_token)
    throw rejected('token response lacks stripe_user_id or access_token', 'oauth_incomplete');
  return {
    account_ref: token.stripe_user_id,
    credential: { secret_key: token.access_token },
    mode: token.livemode ? 'live' : 'test',
  };
}
