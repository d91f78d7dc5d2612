import { roleMay, type Need, type Role } from '../../domain/roles';
import { OPERATIONS } from '../../operations';
import { dashboardOnly, type Operation } from '../../operations/types';

/**
 * What each signed-in page needs of the person's role (the table of roles is domain/roles.ts):
 * `open` to see it (GET), `act` for its forms (POST). Derived, never listed here: each page's
 * need is the scope (or account area) of the operation that declares it gates the page
 * (`pages` in its declaration, operations/types.ts). The dashboard's gate (index.ts) refuses
 * anything else with a 403 before the page's own code runs, and the navigation shows only what
 * `mayOpen` admits; the operations behind the pages check again (operations/policy.ts). A page
 * covers its sub-paths and the most specific page wins; a path no page covers needs only a
 * member (its forms' operations still decide).
 */
interface PageRow {
  page: string;
  path: RegExp;
  open?: Need;
  act?: Need;
}

const needOf = (op: Operation): Need =>
  dashboardOnly(op)
    ? { account: op.accountArea ?? 'credentials' }
    : { scope: op.scope as Exclude<Operation['scope'], 'account'> };

function derivePages(operations: readonly Operation[]): PageRow[] {
  const rows = new Map<string, PageRow & { by: Partial<Record<'open' | 'act', string>> }>();
  for (const op of operations) {
    for (const { page, gates } of op.pages ?? []) {
      const row = rows.get(page) ?? { page, path: new RegExp(`^${page.replace(/[/-]/g, '\\$&')}(\\/|$)`), by: {} };
      for (const gate of gates) {
        // Two operations gating one page the same way would make its need depend on the table's order.
        if (row.by[gate]) throw new Error(`${page}: both ${row.by[gate]} and ${op.name} declare its ${gate} gate`);
        row.by[gate] = op.name;
        row[gate] = needOf(op);
      }
      rows.set(page, row);
    }
  }
  return [...rows.values()].sort((a, b) => b.page.length - a.page.length);
}

const PAGES = derivePages(OPERATIONS);

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
