import { roleMay, type Need, type Role } from '../../domain/roles';

/**
 * What each signed-in page needs of the person's role (the table of roles is domain/roles.ts):
 * `open` to see it (GET), `act` for its forms (POST). The dashboard's gate (index.ts) refuses
 * anything else with a 403 before the page's own code runs, and the navigation shows only what
 * `mayOpen` admits; the operations behind the forms check again (operations/policy.ts).
 * First match wins, so a specific path comes before its section. A path no row matches needs
 * only a member (its forms' operations still decide).
 */
const PAGES: { path: RegExp; open?: Need; act?: Need }[] = [
  { path: /^\/settings\/team(\/|$)/, open: { account: 'team' }, act: { account: 'team' } },
  { path: /^\/settings\/developer-api(\/|$)/, open: { account: 'credentials' }, act: { account: 'credentials' } },
  { path: /^\/providers(\/|$)/, open: { account: 'credentials' }, act: { account: 'credentials' } },
  { path: /^\/products\/new$/, open: { scope: 'products:write' }, act: { scope: 'products:write' } },
  { path: /^\/products(\/|$)/, open: { scope: 'products:read' }, act: { scope: 'products:write' } },
  { path: /^\/paywall(\/|$)/, open: { scope: 'paywall:read' }, act: { account: 'credentials' } },
  { path: /^\/readiness(\/|$)/, open: { scope: 'readiness:read' } },
  { path: /^\/sync-runs(\/|$)/, open: { scope: 'products:read' } },
  { path: /^\/(subscribers|entitlements)(\/|$)/, open: { scope: 'subscribers:read' } },
  {
    path: /^\/webhook-(deliveries|endpoints)(\/|$)/,
    open: { scope: 'webhooks:read' },
    act: { scope: 'webhooks:write' },
  },
  { path: /^\/audit(\/|$)/, open: { scope: 'audit:read' } },
  { path: /^\/customers(\/|$)/, open: { scope: 'customers:read' }, act: { scope: 'grants:write' } },
  { path: /^\/changes(\/|$)/, open: { scope: 'audit:read' }, act: { account: 'approvals' } },
  { path: /^\/imports(\/|$)/, open: { scope: 'imports:read' }, act: { scope: 'imports:write' } },
  { path: /^\/reconciliations(\/|$)/, open: { scope: 'imports:read' } },
];

/** Whether a role may make this request: open the page (GET, HEAD) or send its forms. */
export function mayRequest(role: Role, method: string, path: string): boolean {
  const row = PAGES.find((p) => p.path.test(path));
  if (!row) return true;
  const need = method === 'GET' || method === 'HEAD' ? row.open : (row.act ?? row.open);
  return need === undefined || roleMay(role, need);
}

/** Whether the navigation shows a link to this page to a role. */
export function mayOpen(role: Role, href: string): boolean {
  return mayRequest(role, 'GET', href);
}

/** Whether a page shows a form (a button) to a role: what its POST needs. */
export function mayAct(role: Role, path: string): boolean {
  return mayRequest(role, 'POST', path);
}
