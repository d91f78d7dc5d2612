import { auth } from '@googleapis/androidpublisher';
import { SignJWT, importPKCS8 } from 'jose';
import { EgressError, egressRequest, type EgressAnswer } from '../../egress/request';
import { ProviderRejectedError, classifyHttpFailure } from '../errors';
import { PROVIDER } from './catalog';
import { tokenEndpoint } from './token-endpoint';

export const PLAY_SCOPE = 'https://www.googleapis.com/auth/androidpublisher';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
/** Google caps an assertion's life at one hour. */
const ASSERTION_TTL_S = 3600;

export interface ServiceAccount {
  client_email: string;
  private_key: string;
  private_key_id?: string;
  token_uri: string;
}

/** The error codes of RFC 6749 §5.2: the only words of a token endpoint's answer we repeat. */
const OAUTH_ERRORS = new Set([
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unauthorized_client',
  'unsupported_grant_type',
  'invalid_scope',
]);

/**
 * Reads the service-account JSON; errors never quote it (it holds a private key). `playBaseUrl`
 * is where the operator points the Play adapter: the token_uri must be Google's or on that origin.
 */
export function parseServiceAccount(json: string | undefined, playBaseUrl: string): ServiceAccount {
  const bad = (why: string) => new ProviderRejectedError(PROVIDER, `service_account_json ${why}`);
  if (!json) throw bad('is missing from the credential');
  let sa: Record<string, unknown>;
  try {
    sa = JSON.parse(json);
  } catch {
    throw bad('is not valid JSON');
  }
  if (!sa || typeof sa !== 'object') throw bad('is not a JSON object');
  if (sa.type !== undefined && sa.type !== 'service_account') throw bad('is not of type service_account');
  for (const f of ['client_email', 'private_key', 'token_uri'] as const) {
    if (typeof sa[f] !== 'string' || !sa[f]) throw bad(`has no ${f}`);
  }
  try {
    const u = new URL(sa.token_uri as string);
    if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new Error();
  } catch {
    throw bad('has a token_uri that is not an http(s) URL');
  }
  const endpoint = tokenEndpoint(sa.token_uri as string, playBaseUrl, 0);
  if (!endpoint.ok) throw bad(endpoint.reason);
  return {
    client_email: sa.client_email as string,
    private_key: sa.private_key as string,
    private_key_id: typeof sa.private_key_id === 'string' ? sa.private_key_id : undefined,
    token_uri: sa.token_uri as string,
  };
}

/**
 * The OAuth 2.0 JWT-bearer grant (RFC 7523) as Google runs it: an RS256 assertion signed
 * with the service account's key, aud = token_uri, posted to token_uri. google-auth-library's
 * JWT client always posts to oauth2.googleapis.com (gtoken ignores token_uri), so the grant
 * is done here and handed to the library's OAuth2Client as its refresh handler.
 */
export async function fetchAccessToken(
  sa: ServiceAccount,
  timeoutMs: number,
  playBaseUrl: string,
): Promise<{ access_token: string; expiry_date: number }> {
  const endpoint = tokenEndpoint(sa.token_uri, playBaseUrl, timeoutMs);
  if (!endpoint.ok) throw new ProviderRejectedError(PROVIDER, `service_account_json ${endpoint.reason}`);
  let key: CryptoKey;
  try {
    key = await importPKCS8(sa.private_key, 'RS256');
  } catch {
    throw new ProviderRejectedError(PROVIDER, 'service_account_json private_key is not a PKCS#8 RSA key');
  }
  const now = Math.floor(Date.now() / 1000);
  const assertion = await new SignJWT({ scope: PLAY_SCOPE })
    .setProtectedHeader({ alg: 'RS256', typ: 'JWT', ...(sa.private_key_id ? { kid: sa.private_key_id } : {}) })
    .setIssuer(sa.client_email)
    .setAudience(sa.token_uri)
    .setIssuedAt(now)
    .setExpirationTime(now + ASSERTION_TTL_S)
    .sign(key);
  let res: EgressAnswer;
  try {
    res = await egressRequest(
      sa.token_uri,
      {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: JWT_BEARER, assertion }).toString(),
      },
      endpoint.policy,
    );
  } catch (err) {
    const kind = err instanceof EgressError ? err.kind : 'connect_failed';
    if (kind === 'refused_address')
      throw new ProviderRejectedError(
        PROVIDER,
        'token endpoint refused: its address is private, loopback or reserved',
        { code: 'token_endpoint_refused' },
      );
    if (kind === 'too_large')
      throw classifyHttpFailure(PROVIDER, 502, 'token endpoint answered with more than a token');
    throw classifyHttpFailure(
      PROVIDER,
      undefined,
      `token endpoint unreachable (${kind === 'timeout' ? 'timeout' : 'connection failed'})`,
    );
  }
  // What the endpoint said is never repeated (it may be anyone's server): only its status and,
  // for a standard OAuth refusal, the standard code.
  let body: unknown;
  try {
    body = JSON.parse(res.body.toString('utf8'));
  } catch {
    body = undefined;
  }
  if (res.status >= 300 && res.status < 400)
    throw new ProviderRejectedError(
      PROVIDER,
      `token endpoint answered HTTP ${res.status} (redirects are not followed)`,
      { status: res.status },
    );
  if (res.status < 200 || res.status >= 300) {
    const error = (body as { error?: unknown } | undefined)?.error;
    const code = typeof error === 'string' && OAUTH_ERRORS.has(error) ? error : undefined;
    const why = `token endpoint refused the service account (HTTP ${res.status}${code ? `, ${code}` : ''})`;
    if (res.status < 500 && res.status !== 429)
      throw new ProviderRejectedError(PROVIDER, why, { status: res.status, code });
    const retryAfter = res.headers['retry-after'];
    throw classifyHttpFailure(PROVIDER, res.status, why, typeof retryAfter === 'string' ? retryAfter : null);
  }
  const tok = (body ?? {}) as { access_token?: unknown; expires_in?: unknown };
  if (typeof tok.access_token !== 'string')
    throw classifyHttpFailure(PROVIDER, 502, 'token endpoint answered without an access_token');
  const ttl = typeof tok.expires_in === 'number' ? tok.expires_in : 3600;
  return { access_token: tok.access_token, expiry_date: Date.now() + ttl * 1000 };
}

/** An OAuth2Client (what googleapis expects as `auth`) that mints its tokens with the grant above. */
export function serviceAccountClient(sa: ServiceAccount, timeoutMs: number, playBaseUrl: string) {
  // A token the server no longer honours (401) is re-minted once before the call fails.
  const client = new auth.OAuth2({ forceRefreshOnFailure: true });
  let inflight: Promise<{ access_token: string; expiry_date: number }> | undefined;
  // Concurrent calls on a cold client share one token request.
  client.refreshHandler = () =>
    (inflight ??= fetchAccessToken(sa, timeoutMs, playBaseUrl).finally(() => {
      inflight = undefined;
    }));
  return client;
}
