import type Koa from 'koa';

/**
 * /v1/sdk is called from apps' own pages (another origin). The publishable key is public
 * and no cookie is involved, so any origin may call; the preflight is answered here.
 */
export function sdkCors(): Koa.Middleware {
  return async (ctx, next) => {
    if (!ctx.path.startsWith('/v1/sdk/')) return next();
    ctx.set('Access-Control-Allow-Origin', '*');
    ctx.set('Access-Control-Expose-Headers', 'Request-Id');
    if (ctx.method === 'OPTIONS') {
      ctx.set('Access-Control-Allow-Methods', 'GET, POST, OPTIONS');
      ctx.set('Access-Control-Allow-Headers', 'Authorization, Content-Type, Idempotency-Key');
      ctx.set('Access-Control-Max-Age', '600');
      ctx.status = 204;
      return;
    }
    return next();
  };
}
