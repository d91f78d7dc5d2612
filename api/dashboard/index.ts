import { exactRouter } from '../router';
import type Koa from 'koa';
import type { Services } from '../../operations/services';
import { authPages } from './auth-pages';
import { CsrfRefused } from './form';
import { fromAnotherSite } from './form-origin';
import { keysPage } from './keys-page';
import { providersPage } from './providers-page';
import { browsePages } from './browse-page';
import { syncRunsPage } from './sync-runs-page';
import { readinessPage } from './readiness-page';
import { paywallPage } from './paywall-page';
import { webhookEndpointsPage } from './webhook-endpoints-page';
import { productsPage } from './products-page';
import { overviewPage } from './overview-page';
import { customersPage } from './customers-page';
import { transfersSettingsPage } from './transfers-page';
import { exportsSettingsPage } from './exports-settings-page';
import { changesPage } from './changes-page';
import { chartsPage } from './charts-page';
import { importsPage } from './imports-page';
import { reconciliationsPage } from './reconciliations-page';
import { html } from './html';
import { page } from './layout';
import { sessionMiddleware } from './session';
import { mayRequest } from './page-access';
import { teamPages } from './team-page';
import { invitationPages } from './invitation-page';
import { recordUserAudit } from '../../db/audit';
import type Provider from 'oidc-provider';
import { assistantPages } from '../oauth/consent-page';
import { forbiddenForRole } from '../../operations/policy';

/** Paths that belong to the API or the webhook receivers on the same host: never dashboard pages. */
const NOT_PAGES = /^\/(v1|api|healthz|readyz)(\/|$)/;

/** Pages anyone may open: signing up, logging in and out, an invitation. Every other page needs a signed-in person. */
const PUBLIC = /^\/(signup|login|logout|invitations\/[^/]+)$/;

/**
 * The dashboard's pages, server-rendered. Sessions and CSRF apply to these paths only, so
 * /v1 on this host keeps answering bearer-key clients exactly as the API host does.
 */
export function dashboardPages(services: Services, oauth: Provider): Koa.Middleware {
  const pages = exactRouter();
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
    teamPages(services),
    invitationPages(services),
    customersPage(services),
    changesPage(services),
    importsPage(services),
    reconciliationsPage(services),
    transfersSettingsPage(services),
    exportsSettingsPage(services),
    assistantPages(services, oauth),
  ])
    pages.use(r.routes(), r.allowedMethods());

  // In this order, before any page code runs and before any body is read: a person (unless the
  // page is public), a form from this site (form-origin.ts), the person's role.
  const guarded: Koa.Middleware = async (ctx, next) => {
    if (!PUBLIC.test(ctx.path) && !ctx.state.user) {
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
    if (!isReadOnly(ctx.method) && fromAnotherSite(ctx, services.config.publicDashboardUrl)) {
      refusedForm(ctx, new CsrfRefused());
      return;
    }
    // The person's role, read with this request's session, against what the page needs
    // (page-access.ts): refused before the page's code runs, and audited as theirs.
    const user = ctx.state.user;
    if (user && !mayRequest(user.role, ctx.method, ctx.path)) {
      await recordUserAudit(services.db, {
        tenantId: user.tenant_id,
        userId: user.id,
        action: 'dashboard.page',
        requestId: ctx.state.requestId,
        outcome: 'insufficient_scope',
        detail: { method: ctx.method, path: ctx.path, role: user.role },
      });
      ctx.status = 403;
      ctx.type = 'html';
      ctx.body = page({
        title: 'Not allowed',
        user,
        csrf: ctx.state.csrf!,
        error: forbiddenForRole().detail,
        body: html`<p><a href="/overview">Back to the overview</a></p>`,
      });
      return;
    }
    try {
      await next();
    } catch (err) {
      if (err instanceof CsrfRefused) return refusedForm(ctx, err);
      throw err;
    }
  };
  const session = sessionMiddleware(services.db);
  const routes = pages.routes();
  // A path no page has under any method is not the dashboard's (a 404 further on): it reads no
  // session and meets no gate, and no page code can run for it.
  const isPage = (path: string) => pages.match(path, 'GET').path.some((layer) => layer.methods.length > 0);
  return (ctx, next) =>
    NOT_PAGES.test(ctx.path) || !isPage(ctx.path)
      ? next()
      : session(ctx, () => guarded(ctx, () => routes(ctx as never, next)));
}

const isReadOnly = (method: string) => method === 'GET' || method === 'HEAD' || method === 'OPTIONS';

function refusedForm(ctx: Koa.Context, err: CsrfRefused): void {
  ctx.status = 403;
  ctx.type = 'html';
  ctx.body = page({
    title: 'Request refused',
    user: ctx.state.user,
    csrf: ctx.state.csrf!,
    error: err.message,
    body: html``,
  });
}
