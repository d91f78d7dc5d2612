import type Koa from 'koa';
import type { Knex } from 'knex';
import { sessionUser } from '../db/dashboard-users';
import { SESSION_COOKIE } from './dashboard/session';

/** Served as /assets/home.css: the CSP allows no inline style. */
export const HOME_STYLE =
  'body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;color:#222}code{background:#f3f3f3;padding:0 .3em}';

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Billing service</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/assets/home.css">
</head><body>
<h1>Billing service</h1>
<p><a href="/signup">Sign up</a> · <a href="/login">Log in</a></p>
<p>This is the dashboard host. The management API is served here too, under <a href="/v1/openapi.json"><code>/v1</code></a>
(authenticate with <code>Authorization: Bearer sk_…</code>); providers post their webhooks to <code>/api/webhooks/&lt;provider&gt;</code>.</p>
<ul>
<li><a href="/v1/openapi.json">OpenAPI document</a></li>
<li><a href="/readyz">Readiness</a> · <a href="/healthz">Health</a></li>
</ul>
<p>Mint a key with <code>npm run -s admin -- key:create --tenant ID --scopes …</code>; see the README for the rest.</p>
</body></html>`;

/**
 * The dashboard host's front page: where a person lands, and where to go from there. A person
 * already signed in goes on to their overview; the page's "Log in" is not for them.
 */
export function dashboardHome(db: Knex): Koa.Middleware {
  return async (ctx, next) => {
    if (ctx.method !== 'GET' || ctx.path !== '/') return next();
    const token = ctx.cookies.get(SESSION_COOKIE);
    if (token && token.length <= 100 && (await sessionUser(db, token))) return ctx.redirect('/overview');
    ctx.type = 'html';
    ctx.body = PAGE;
  };
}
