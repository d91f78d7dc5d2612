import Router from '@koa/router';

/**
 * Every router of the service: a path matches only as written, letter case and a trailing slash
 * included. Gates that judge a request by its path (the dashboard's page gate, api/dashboard/index.ts
 * and page-access.ts) compare it as written; a router that took `/Settings/Team` or `/settings/team/`
 * for `/settings/team` ran the page behind a pattern that never matched. ESLint refuses `new Router`
 * anywhere else in api/.
 */
export function exactRouter(opts: { prefix?: string } = {}): Router {
  return new Router({ ...opts, sensitive: true, strict: true });
}
