import type Koa from 'koa';
import { exactRouter } from '../router';
import { ApiError } from '../../operations/errors';
import type { Services } from '../../operations/services';
import { identifyRevenueCat } from './auth';
import { revenuecatErrors } from './errors';
import { registerAttributes } from './attributes';
import { registerIdentify } from './identify';
import { registerOfferings } from './offerings';
import { registerProducts } from './products';
import { registerReceipts } from './receipts';
import { registerSubscriber } from './subscriber';

export const REVENUECAT_PREFIX = '/revenuecat';

/** The request headers RevenueCat's SDKs send (a browser asks before sending them cross-origin). */
const SDK_HEADERS = [
  'Authorization',
  'Content-Type',
  'Accept',
  'X-Platform',
  'X-Version',
  'X-Is-Sandbox',
  'X-Platform-Flavor',
  'X-Platform-Flavor-Version',
  'X-RC-Subscriber-Token',
  'X-Client-Version',
  'X-Client-Build-Version',
  'X-Observer-Mode-Enabled',
  'X-Storefront',
  'X-Preferred-Locales',
  'X-Nonce',
];

/**
 * RevenueCat's client API under `{API host}/revenuecat` (docs/revenuecat-compatibility.md): the
 * paths RevenueCat's SDKs call with `proxyURL` set here, answered from the same reads and rules
 * as /v1/sdk, in RevenueCat's bodies and error shape. Keys in RevenueCat's formats only. A path
 * no route takes is the key first (401), then 404, in RevenueCat's error shape.
 */
export function mountRevenueCat(app: Koa, services: Services): void {
  const router = exactRouter({ prefix: REVENUECAT_PREFIX });
  registerSubscriber(router, services);
  registerOfferings(router, services);
  registerProducts(router, services);
  registerReceipts(router, services);
  registerIdentify(router, services);
  registerAttributes(router, services);
  const routes = router.routes();
  app.use(async (ctx, next) => {
    if (ctx.path !== REVENUECAT_PREFIX && !ctx.path.startsWith(`${REVENUECAT_PREFIX}/`)) return next();
    // Called from apps' own pages (another origin): the key is public and no cookie is involved.
    ctx.set('Access-Control-Allow-Origin', '*');
    ctx.set('Access-Control-Expose-Headers', 'Request-Id');
    if (ctx.method === 'OPTIONS') {
      ctx.set('Access-Control-Allow-Methods', 'GET, POST, OPTIONS');
      ctx.set('Access-Control-Allow-Headers', SDK_HEADERS.join(', '));
      ctx.set('Access-Control-Max-Age', '600');
      ctx.status = 204;
      return;
    }
    await revenuecatErrors()(ctx, async () => {
      await routes(ctx as Parameters<typeof routes>[0], async () => undefined);
      if (ctx.body !== undefined || ctx.status !== 404) return;
      await identifyRevenueCat(services.db, ctx.req.rawHeaders);
      const allowed = router.match(ctx.path, ctx.method).path.flatMap((l) => l.methods);
      if (allowed.length > 0) {
        const allow = [...new Set(allowed)].sort().join(', ');
        throw new ApiError(
          405,
          'method_not_allowed',
          `${ctx.method} is not allowed on ${ctx.path}.`,
          {},
          { Allow: allow },
        );
      }
      throw new ApiError(404, 'not_found', `This service does not answer ${ctx.path.slice(REVENUECAT_PREFIX.length)}.`);
    });
  });
}
