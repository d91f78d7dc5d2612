import type http from 'node:http';
import { createApiApp, createDashboardApp, createToolsApp } from '../../api/apps';
import type { Services } from '../../operations/services';
import { createLogger } from '../../runtime/logger';
import { listen, testServices } from './api';

/**
 * A listener whose address is known before its app is built: the dashboard (the authorization
 * server) and the tool server (the protected resource) need their public URLs in their config.
 * `first` answers until `set` installs the app; `closers` gets the listener's close.
 */
export async function lateListener(
  closers: (() => Promise<void>)[],
  first: http.RequestListener = (_req, res) => res.end(),
) {
  let handler = first;
  const l = await listen((req, res) => handler(req, res));
  closers.push(l.close);
  return { url: l.url, set: (h: http.RequestListener) => (handler = h) };
}

/**
 * The dashboard and the tool server in-process, told the addresses they got (docs/assistant-sign-in.md:
 * the issuer and the resource are those URLs), and the REST API beside them when `api` is asked
 * for. `overrides` are the services' (a test worker's config and vault, for writes held for
 * approval).
 */
export async function startSignInApps(
  closers: (() => Promise<void>)[],
  opts: { api?: boolean; overrides?: Partial<Services> } = {},
) {
  const dashboard = await lateListener(closers);
  const tools = await lateListener(closers);
  const api = opts.api ? await lateListener(closers) : undefined;
  const base = testServices(opts.overrides);
  const services: Services = {
    ...base,
    config: { ...base.config, publicDashboardUrl: dashboard.url, publicToolsUrl: tools.url },
  };
  const log = createLogger('silent');
  dashboard.set(createDashboardApp(services, log).callback());
  tools.set(createToolsApp(services, log).callback());
  api?.set(createApiApp(services, log).callback());
  return { services, dashboardRoot: dashboard.url, toolsRoot: tools.url, apiRoot: api?.url ?? '' };
}
