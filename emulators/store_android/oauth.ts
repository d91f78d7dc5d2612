import crypto from 'node:crypto';
import type Koa from 'koa';
import { decodeProtectedHeader, errors as joseErrors, jwtVerify } from 'jose';
import type { AccountRecord, Accounts, Mode } from './accounts';
import { GoogleError, readRawBody } from './google-error';
import type { EmulatorKeys } from './keys';

export const PLAY_SCOPE = 'https://www.googleapis.com/auth/androidpublisher';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
/** Google's access tokens live an hour; expires_in counts down from 3599. */
const ACCESS_TOKEN_TTL_S = 3599;
const REAL_TOKEN_URIS = ['https://oauth2.googleapis.com/token', 'https://www.googleapis.com/oauth2/v4/token'];

export interface Caller {
  account: AccountRecord;
  mode: Mode;
}

function oauthError(ctx: Koa.Context, status: number, error: string, description: string) {
  ctx.status = status;
  ctx.body = { error, error_description: description };
}

const b64 = (buf: Buffer | string) => Buffer.from(buf).toString('base64url');

export function oauth(accts: Accounts, keys: EmulatorKeys, publicUrl: () => string) {
  const mac = (payload: string) => crypto.createHmac('sha256', keys.accessTokenSecret()).update(payload).digest();

  /** Opaque to clients (like Google's ya29.… tokens), self-checking here, so it survives a restart. */
  function mintAccessToken(account: string, mode: Mode, scope: string): string {
    const payload = b64(
      JSON.stringify({ a: account, m: mode, s: scope, e: Math.floor(Date.now() / 1000) + ACCESS_TOKEN_TTL_S }),
    );
    return `ya29.${payload}.${b64(mac(payload))}`;
  }

  function readAccessToken(token: string): { a: string; m: Mode; s: string; e: number } | null {
    const [prefix, payload, sig] = token.split('.');
    if (prefix !== 'ya29' || !payload || !sig) return null;
    const want = mac(payload);
    const got = Buffer.from(sig, 'base64url');
    if (got.length !== want.length || !crypto.timingSafeEqual(got, want)) return null;
    try {
      return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      return null;
    }
  }

  return {
    /** POST /token — the JWT-bearer grant: the assertion must be signed by a registered service account's key. */
    async token(ctx: Koa.Context): Promise<void> {
      const form = new URLSearchParams(await readRawBody(ctx));
      const grant = form.get('grant_type');
      if (grant !== JWT_BEARER)
        return oauthError(ctx, 400, 'unsupported_grant_type', `Invalid grant_type: ${grant ?? ''}`);
      const assertion = form.get('assertion') ?? '';
      let claims: { iss?: unknown };
      let kid: string | undefined;
      try {
        kid = decodeProtectedHeader(assertion).kid;
        claims = JSON.parse(Buffer.from(assertion.split('.')[1] ?? '', 'base64url').toString('utf8'));
      } catch {
        return oauthError(ctx, 400, 'invalid_grant', 'Invalid JWT: Malformed assertion.');
      }
      const found = typeof claims.iss === 'string' ? accts.findServiceAccount(claims.iss) : undefined;
      if (!found) return oauthError(ctx, 400, 'invalid_grant', 'Invalid grant: account not found');
      if (kid && kid !== found.sa.private_key_id)
        return oauthError(ctx, 400, 'invalid_grant', 'Invalid JWT Signature.');
      let scope: string;
      try {
        const { payload } = await jwtVerify(assertion, crypto.createPublicKey(found.sa.public_key_pem), {
          algorithms: ['RS256'],
          issuer: found.sa.client_email,
          // Google checks aud against the endpoint the assertion was sent to; behind a proxy that is
          // the URL the client addressed (its Host), which is also what its token_uri names.
          audience: [
            found.sa.token_uri,
            `${publicUrl()}/token`,
            `${ctx.protocol}://${ctx.host}/token`,
            ...REAL_TOKEN_URIS,
          ],
          requiredClaims: ['iat', 'exp'],
          clockTolerance: 60,
        });
        if ((payload.exp as number) - (payload.iat as number) > 3600)
          throw new joseErrors.JWTClaimValidationFailed('too long-lived', payload, 'exp');
        scope = typeof payload.scope === 'string' ? payload.scope : '';
      } catch (err) {
        if (err instanceof joseErrors.JWSSignatureVerificationFailed)
          return oauthError(ctx, 400, 'invalid_grant', 'Invalid JWT Signature.');
        if (err instanceof joseErrors.JWTClaimValidationFailed && err.claim === 'aud')
          return oauthError(ctx, 400, 'invalid_grant', 'Invalid JWT: Failed audience check.');
        return oauthError(
          ctx,
          400,
          'invalid_grant',
          'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.',
        );
      }
      if (!scope) return oauthError(ctx, 400, 'invalid_scope', 'Invalid OAuth scope or ID token audience provided.');
      ctx.set('Cache-Control', 'no-cache, no-store, max-age=0, must-revalidate');
      ctx.body = {
        access_token: mintAccessToken(found.account.account, found.sa.mode, scope),
        expires_in: ACCESS_TOKEN_TTL_S,
        token_type: 'Bearer',
      };
    },

    /** GET /oauth2/v3/certs — the key set that verifies the emulator's Pub/Sub push tokens. */
    certs(ctx: Koa.Context): void {
      ctx.set('Cache-Control', 'public, max-age=21600');
      ctx.body = { keys: [keys.oidcKey().jwk] };
    },

    /** Every Play API call: a valid, unexpired access token with the androidpublisher scope. */
    authenticate(ctx: Koa.Context): Caller {
      const m = (ctx.get('authorization') || '').match(/^Bearer\s+(\S+)$/i);
      if (!m) {
        throw new GoogleError(
          401,
          'Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.',
          'UNAUTHENTICATED',
          'required',
        );
      }
      const t = readAccessToken(m[1]);
      const account = t ? accts.find(t.a) : undefined;
      if (!t || !account || t.e * 1000 < Date.now()) {
        throw new GoogleError(
          401,
          'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.',
        );
      }
      if (!t.s.split(/\s+/).includes(PLAY_SCOPE)) {
        throw new GoogleError(
          403,
          'Request had insufficient authentication scopes.',
          'PERMISSION_DENIED',
          'insufficientPermissions',
        );
      }
      return { account, mode: t.m };
    },
  };
}
