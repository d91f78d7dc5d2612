import Router from '@koa/router';
import type Koa from 'koa';
import type { Services } from '../../operations/services';
import { authPages } from './auth-pages';
import { CsrfRefused } from './form';
import { keysPage } from './keys-page';
import { providersPage } from './providers-page';
import { browsePages } from './browse-page';
import { syncRunsPage } from './sync-runs-page';
import { readinessPage } from './readiness-page';
import { paywallPage } from './paywall-page';
import { webhookEndpointsPage } from './webhook-endpoints-page';
import { productsPage } from './products-page';
import { overviewPage } from './overview-page';
import { chartsPage } from './charts-page';
import { html } from './html';
import { page } from './layout';
import { sessionMiddleware } from './session';

/** Paths that belong to the API or the webhook receivers on the same host: never dashboard pages. */
const NOT_PAGES = /^\/(v1|api|healthz|readyz)(\/|$)/;

/** Pages a person reaches only when signed in. */
const SIGNED_IN =
  /^\/(overview|charts|settings|providers|products|paywall|readiness|sync-runs|subscribers|entitlements|webhook-deliveries|webhook-endpoints|audit)(\/|$)/;

/**
 * The dashboard's pages, server-rendered. Sessions and CSRF apply to these paths only, so
 * /v1 on this host keeps answering bearer-key clients exactly as the API host does.
 */
export function dashboardPages(services: Services): Koa.Middleware {
  const pages = new Router();
  for (const r of [
    authPages(services),
    keysPage(services),
    providersPage(services),
    browsePages(services),
    syncRunsPage(services),
    readinessPage(services),
    productsPage(services),
    paywallPage(services),
    overviewPage(services),
    chartsPage(services),
    webhookEndpointsPage(services),
  ])
    pages.use(r.routes(), r.allowedMethods());

  const guarded: Koa.Middleware = async (ctx, next) => {
    if (SIGNED_IN.test(ctx.path) && !ctx.state.user) {
      if (ctx.method === 'GET') return ctx.redirect(`/login?next=${encodeURIComponent(ctx.path)}`);
      ctx.status = 401;
      ctx.type = 'html';
      ctx.body = page({
        title: 'Signed out',
        csrf: ctx.state.csrf!,
        error: 'Your session has ended. Log in again.',
        body: html``,
      });
      return;
    }
    try {
      await next();
    } catch (err) {
      if (err instanceof CsrfRefused) {
        ctx.status = 403;
        ctx.type = 'html';
        ctx.body = page({
          title: 'Request refused',
          user: ctx.state.user,
          csrf: ctx.state.csrf!,
          error: err.message,
          body: html``,
        });
        return;
      }
      throw err;
    }
  };
  const session = sessionMiddleware(services.db);
  const routes = pages.routes();
  return (ctx, next) =>
    NOT_PAGES.test(ctx.path) ? next() : session(ctx, () => guarded(ctx, () => routes(ctx as never, next)));
}
