import { createRemoteJWKSet, errors as joseErrors, jwtVerify } from 'jose';
import { ProviderUnreachableError, WebhookVerificationError } from '../errors';
import type { NormalisedEvent, WebhookInput } from '../types';
import { PROVIDER } from './catalog';
import { MalformedPush, parsePush } from './rtdn';

export const GOOGLE_JWKS_URL = 'https://www.googleapis.com/oauth2/v3/certs';
/** Google signs Pub/Sub push OIDC tokens with either spelling of its issuer. */
const ISSUERS = ['accounts.google.com', 'https://accounts.google.com'];

export interface PushVerifyOptions {
  jwksUrl?: string;
  /** When set, the token's email claim must be this (verified) push service account. */
  pushServiceAccountEmail?: string;
}

/** One remote key set per URL: jose caches the keys and refetches on an unknown kid. */
const keySets = new Map<string, ReturnType<typeof createRemoteJWKSet>>();
function keySet(url: string) {
  let set = keySets.get(url);
  if (!set) {
    set = createRemoteJWKSet(new URL(url), { timeoutDuration: 5000, cooldownDuration: 30_000 });
    keySets.set(url, set);
  }
  return set;
}

function headerValue(headers: WebhookInput['headers'], name: string): string | undefined {
  const direct =
    headers[name] ??
    headers[name.toLowerCase()] ??
    Object.entries(headers).find(([k]) => k.toLowerCase() === name)?.[1];
  return Array.isArray(direct) ? direct[0] : direct;
}

function rejection(err: unknown): Error {
  if (err instanceof joseErrors.JWTExpired) return new WebhookVerificationError(PROVIDER, 'OIDC token expired');
  if (err instanceof joseErrors.JWTClaimValidationFailed)
    return new WebhookVerificationError(PROVIDER, `OIDC token claim "${err.claim}" is not acceptable`);
  if (err instanceof joseErrors.JWSSignatureVerificationFailed)
    return new WebhookVerificationError(PROVIDER, 'OIDC token signature does not verify');
  if (err instanceof joseErrors.JWKSNoMatchingKey)
    return new WebhookVerificationError(PROVIDER, 'OIDC token signed by an unknown key');
  const jwksUnreadable =
    err instanceof joseErrors.JWKSTimeout ||
    err instanceof joseErrors.JWKSInvalid ||
    err instanceof TypeError ||
    // jose throws its generic error for a non-200 or unparsable key-set response.
    (err instanceof joseErrors.JOSEError && err.code === 'ERR_JOSE_GENERIC');
  if (jwksUnreadable) {
    // Google's key set could not be read: not the sender's fault, so the push must be retried.
    return new ProviderUnreachableError(PROVIDER, 'could not fetch the OIDC signing keys');
  }
  if (err instanceof joseErrors.JOSEError)
    return new WebhookVerificationError(PROVIDER, `OIDC token rejected (${err.code})`);
  return new WebhookVerificationError(PROVIDER, 'OIDC token rejected');
}

/**
 * Pub/Sub push authentication: the push carries `Authorization: Bearer <OIDC JWT>` signed by
 * Google, whose audience is the value configured on the push subscription (input.secret).
 * The token does not cover the body, so authenticity rests on issuer, audience, expiry and
 * (optionally) the push service account's email.
 */
export async function verifyPush(input: WebhookInput, opts: PushVerifyOptions): Promise<NormalisedEvent> {
  const authz = headerValue(input.headers, 'authorization');
  const m = authz?.match(/^Bearer\s+(\S+)$/i);
  if (!m) throw new WebhookVerificationError(PROVIDER, 'missing Authorization: Bearer token');
  if (!input.secret) throw new WebhookVerificationError(PROVIDER, 'no push audience configured for this connection');
  let payload: Record<string, unknown>;
  try {
    ({ payload } = await jwtVerify(m[1], keySet(opts.jwksUrl ?? GOOGLE_JWKS_URL), {
      issuer: ISSUERS,
      audience: input.secret,
      algorithms: ['RS256'],
      currentDate: input.now,
      requiredClaims: ['exp', 'iat'],
    }));
  } catch (err) {
    throw rejection(err);
  }
  if (
    opts.pushServiceAccountEmail &&
    (payload.email !== opts.pushServiceAccountEmail || payload.email_verified !== true)
  ) {
    throw new WebhookVerificationError(PROVIDER, 'OIDC token is not from the configured push service account');
  }
  try {
    return parsePush(input.rawBody);
  } catch (err) {
    if (err instanceof MalformedPush)
      throw new WebhookVerificationError(PROVIDER, `unprocessable push: ${err.message}`);
    throw err;
  }
}
