import Koa from 'koa';
import type Router from '@koa/router';
import { exactRouter } from './router';
import type { Logger } from 'pino';
import { dashboardHome } from './dashboard-home';
import { dashboardAssets } from './dashboard/assets';
import { sdkFileRoutes } from './dashboard/sdk-files';
import { securityHeaders } from './dashboard/security-headers';
import { dashboardPages } from './dashboard';
import { v1Fallthrough } from './fallthrough';
import { webhookReceiver } from './webhooks/receiver';
import { toolServer } from './tools/server';
import { healthRoutes } from './health';
import { clientAddress } from './client-address';
import { errorHandler, requestContext } from './middleware';
import { OPERATIONS } from '../operations';
import { publishedOpenApi } from './openapi';
import { restRouter } from './rest';
import type { Services } from '../operations/services';
import { mountSdk } from './sdk/mount';
import { mountRevenueCat } from './revenuecat/mount';
import { httpMetrics } from './metrics';
import { authorizationServerRoutes, createAuthorizationServer } from './oauth/provider';
import { registrationAllowed } from './oauth/registration-limit';
import { jwksRoute } from './jwks';

function base(services: Services, log: Logger, listener: 'api' | 'dashboard' | 'tools'): Koa {
  const app = new Koa();
  app.use(httpMetrics(listener));
  // X-Forwarded-* are believed only from TRUSTED_PROXIES (api/client-address.ts), never from anyone.
  app.proxy = false;
  app.use(clientAddress(services.config.trustedProxies));
  app.use(requestContext(log));
  app.use(errorHandler());
  app.use(healthRoutes(services));
  return app;
}

/** The management API at /v1 (mounted identically on the API host and the dashboard host). */
function v1Router(services: Services): Router {
  const v1 = exactRouter({ prefix: '/v1' });
  const openapi = publishedOpenApi();
  v1.get('/openapi.json', (ctx) => {
    ctx.body = openapi;
  });
  const rest = restRouter(OPERATIONS, services);
  v1.use(rest.routes());
  return v1;
}

/** /v1 with its fallthrough (401 before 404/405, Error shape); the same on both hosts. */
function mountV1(app: Koa, services: Services): void {
  const v1 = v1Router(services);
  app.use(v1Fallthrough(v1, services.db));
  app.use(v1.routes());
}

/** API host (:4000): CI, deploy jobs, agents — secret keys. */
export function createApiApp(services: Services, log: Logger): Koa {
  const app = base(services, log, 'api');
  // The signing keys tokens and digests are checked with (no auth, cacheable).
  app.use(jwksRoute(services));
  // Client endpoints (/v1/sdk/*, publishable keys), called cross-origin from apps' pages.
  mountSdk(app, services);
  // RevenueCat's client API (/revenuecat/*, RevenueCat-format keys): RevenueCat's SDKs with proxyURL set here.
  mountRevenueCat(app, services);
  mountV1(app, services);
  return app;
}

/** Dashboard host (:4001): people in browsers, the alternate /v1, inbound provider webhooks. */
export function createDashboardApp(services: Services, log: Logger, extra: Koa.Middleware[] = []): Koa {
  const app = base(services, log, 'dashboard');
  // Assistants sign in here (docs/assistant-sign-in.md): the authorization server's endpoints.
  const oauth = createAuthorizationServer(services);
  app.use(authorizationServerRoutes(oauth, (ctx) => registrationAllowed(services, ctx)));
  app.use(securityHeaders());
  app.use(dashboardAssets());
  app.use(sdkFileRoutes());
  app.use(dashboardHome(services.db));
  app.use(webhookReceiver(services));
  app.use(dashboardPages(services, oauth));
  for (const mw of extra) app.use(mw);
  mountSdk(app, services);
  mountV1(app, services);
  return app;
}

/** Tool server (:4002): JSON-RPC 2.0 over Streamable HTTP for assistants (MCP). */
export function createToolsApp(services: Services, log: Logger, extra: Koa.Middleware[] = []): Koa {
  const app = base(services, log, 'tools');
  for (const mw of extra) app.use(mw);
  app.use(toolServer(services));
  return app;
}
