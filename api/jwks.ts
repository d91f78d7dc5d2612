import type Koa from 'koa';
import { signingKeys } from '../db/signing-key-service';
import { ApiError } from '../operations/errors';
import type { Services } from '../operations/services';

/** How long a verifier or a CDN may keep the key set (docs/entitlement-tokens.md, "Keys"). */
export const JWKS_MAX_AGE_SECONDS = 300;

/**
 * `GET /.well-known/jwks.json` on the API host: the deployment's published signing keys (RFC
 * 7517), without auth, cacheable and readable cross-origin (a browser SDK checks tokens
 * with it). A withdrawn key is gone from the next answer; a cache keeps it at most max-age.
 */
export function jwksRoute(services: Services): Koa.Middleware {
  const keys = signingKeys(services.db, services.vault);
  return async (ctx, next) => {
    if (ctx.path !== '/.well-known/jwks.json') return next();
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD')
      throw new ApiError(
        405,
        'method_not_allowed',
        `${ctx.method} is not allowed on ${ctx.path}; allowed: GET, HEAD.`,
        {},
        {
          Allow: 'GET, HEAD',
        },
      );
    ctx.set('Cache-Control', `public, max-age=${JWKS_MAX_AGE_SECONDS}`);
    ctx.set('Access-Control-Allow-Origin', '*');
    ctx.type = 'application/jwk-set+json';
    ctx.body = JSON.stringify(await keys.publishedJwks());
  };
}
