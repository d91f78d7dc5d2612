import type { FormObject } from './form';
import type { Accounts } from './accounts';
import type { Repo, Scope } from './repo';

export interface ApiRequest {
  method: string;
  path: string;
  params: Record<string, string>;
  query: FormObject;
  body: FormObject;
  scope: Scope;
}

/** What every resource module receives: the object repository, the accounts and our public URL. */
export interface ApiDeps {
  repo: Repo;
  accounts: Accounts;
  publicUrl: () => string;
}

export type Handler = (req: ApiRequest) => unknown;

export interface Route {
  method: string;
  pattern: RegExp;
  keys: string[];
  handler: Handler;
}

/** `route('GET', '/v1/products/:id', h)`: path params are single segments. */
export function route(method: string, path: string, handler: Handler): Route {
  const keys: string[] = [];
  const source = path.replace(/:([a-z_]+)/g, (_m, k: string) => {
    keys.push(k);
    return '([^/]+)';
  });
  return { method, pattern: new RegExp(`^${source}/?$`), keys, handler };
}

export function match(
  routes: Route[],
  method: string,
  path: string,
): { route: Route; params: Record<string, string> } | 'method' | undefined {
  let pathMatched = false;
  for (const r of routes) {
    const m = r.pattern.exec(path);
    if (!m) continue;
    pathMatched = true;
    if (r.method !== method) continue;
    const params: Record<string, string> = {};
    r.keys.forEach((k, i) => (params[k] = decodeURIComponent(m[i + 1])));
    return { route: r, params };
  }
  return pathMatched ? 'method' : undefined;
}
