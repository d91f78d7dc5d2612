import { parse } from 'csv-parse/sync';
import { DEFAULT_ENTITLEMENT } from '../domain/revenuecat';
import { CliFailure, listAll, request, type ApiConfig } from './api-client';

/**
 * `billing revenuecat:compare`: while an app runs on RevenueCat and here side by side
 * (docs/migrate-from-revenuecat.md, "Dual-run"), who has which entitlement until when, on
 * each side, and every app user where the two differ.
 */

/** App user → entitlement identifier → when access ends (ms since epoch; null: never). */
export type AccessMap = Map<string, Map<string, number | null>>;

/**
 * The columns read, first present wins: RevenueCat's customer and transaction exports name them
 * differently. The Transactions feed of its Scheduled Data Exports (docs/migrate-from-revenuecat.md)
 * names the customer twice: `rc_original_app_user_id` (its first id, often `$RCAnonymousID:…`) and
 * `rc_last_seen_app_user_id_alias` (the id it was last seen under); its access ends at
 * `effective_end_time` (the later of `end_time` and `grace_period_end_time`).
 */
const USER_COLUMNS = ['app_user_id', 'rc_last_seen_app_user_id_alias', 'rc_original_app_user_id'];
/**
 * The entitlements: `entitlement_identifiers` is the Transactions feed's column ("an array of
 * entitlements that the transaction unlocked", null when none), the only one RevenueCat documents
 * for them. `active_entitlements` is read only from a file without it (a list saved by hand from
 * a spreadsheet, whose columns RevenueCat does not document). Nothing else is read as an
 * entitlement: an `entitlement_id` in RevenueCat's own API is its object id, not the identifier
 * the SDKs see, so reading it would report every user as differing.
 */
const ENTITLEMENT_COLUMNS = ['entitlement_identifiers', 'active_entitlements'];
const EXPIRY_COLUMNS = ['expires_date', 'effective_end_time', 'expiration_at', 'end_time'];
const SANDBOX_COLUMNS = ['is_sandbox', 'sandbox'];

/** The most lines one file may hold: the comparison reads the whole file into memory. */
export const MAX_COMPARE_LINES = 1_000_000;

const pick = (row: Record<string, string>, columns: string[]) => {
  for (const c of columns) if (row[c] !== undefined && row[c].trim() !== '') return row[c].trim();
  return undefined;
};

/**
 * A JSON array as the feed writes it (`["pro","gold"]`), or `pro`, `pro;gold`, `pro,gold`,
 * `pro|gold` from a hand-made file; the feed's null (empty, or `null`) unlocks nothing.
 */
function identifiers(cell: string): string[] {
  if (cell === 'null') return [];
  if (cell.startsWith('[')) {
    try {
      const list = JSON.parse(cell) as unknown;
      if (Array.isArray(list)) return list.filter((x): x is string => typeof x === 'string' && x !== '');
    } catch {
      /* not JSON: read as a separated list */
    }
  }
  return cell
    .split(/[;,|]/)
    .map((s) => s.trim())
    .filter(Boolean);
}

function later(a: number | null | undefined, b: number | null): number | null {
  if (a === undefined) return b;
  if (a === null || b === null) return null;
  return Math.max(a, b);
}

function put(map: AccessMap, user: string, entitlement: string, until: number | null) {
  const mine = map.get(user) ?? new Map<string, number | null>();
  mine.set(entitlement, later(mine.get(entitlement), until));
  map.set(user, mine);
}

/**
 * RevenueCat's export as who holds what, active at `now`: a line whose end is past is no access;
 * a line of the other side (sandbox or not) is left out. Problems name the line.
 */
export function readRevenueCatExport(csv: string, opts: { sandbox: boolean; now: number }): AccessMap {
  return readRevenueCatCustomers(csv, opts).access;
}

/**
 * RevenueCat's delivered files are separated by semicolons, a file saved from a spreadsheet or a
 * list export by commas: the header line says which (it holds no quoted field).
 */
function delimiterOf(csv: string): ',' | ';' {
  const header = csv.slice(0, csv.search(/\r?\n|$/));
  return header.includes(';') && !header.includes(',') ? ';' : ',';
}

/**
 * The export's access (readRevenueCatExport) and the ids each line names for one customer (its
 * original id and the id it was last seen under), to follow aliases with (followAliases).
 */
export function readRevenueCatCustomers(
  csv: string,
  opts: { sandbox: boolean; now: number },
): { access: AccessMap; links: [string, string][] } {
  let rows: Record<string, string>[];
  try {
    rows = parse(csv, {
      columns: true,
      skip_empty_lines: true,
      trim: true,
      bom: true,
      delimiter: delimiterOf(csv.replace(/^\uFEFF/, '')),
      to_line: MAX_COMPARE_LINES + 1,
    });
  } catch (e) {
    throw new CliFailure('invalid_file', `not a CSV file: ${(e as Error).message}`);
  }
  const header = Object.keys(rows[0] ?? {});
  const need = (columns: string[], what: string) => {
    if (rows.length > 0 && !columns.some((c) => header.includes(c)))
      throw new CliFailure('invalid_file', `no ${what} column: expected one of ${columns.join(', ')}`);
  };
  need(USER_COLUMNS, 'app user id');
  need(ENTITLEMENT_COLUMNS, 'entitlement');
  // One column for the whole file, the documented one when present: a line it leaves null unlocks nothing.
  const entitlementColumn = ENTITLEMENT_COLUMNS.filter((c) => header.includes(c)).slice(0, 1);
  const map: AccessMap = new Map();
  const links = new Map<string, [string, string]>();
  rows.forEach((row, i) => {
    const line = i + 2;
    const user = pick(row, USER_COLUMNS);
    if (!user) throw new CliFailure('invalid_file', `line ${line}: no app user id`);
    // Every id the line names is the same customer, whatever else the line says.
    for (const other of USER_COLUMNS.map((c) => pick(row, [c])))
      if (other && other !== user) links.set(`${user}\n${other}`, [user, other]);
    const sandbox = pick(row, SANDBOX_COLUMNS);
    if (sandbox !== undefined && /^(true|1|yes)$/i.test(sandbox) !== opts.sandbox) return;
    const expiry = pick(row, EXPIRY_COLUMNS);
    let until: number | null = null;
    if (expiry !== undefined) {
      // Seconds or milliseconds since the epoch, or a date as RevenueCat writes them (UTC).
      until = /^\d+$/.test(expiry)
        ? Number(expiry) * (expiry.length <= 10 ? 1000 : 1)
        : Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(expiry) ? expiry : `${expiry.replace(' ', 'T')}Z`);
      if (Number.isNaN(until)) throw new CliFailure('invalid_file', `line ${line}: "${expiry}" is not a date`);
      if (until <= opts.now) return;
    }
    for (const e of identifiers(pick(row, entitlementColumn) ?? '')) put(map, user, e, until);
  });
  return { access: map, links: [...links.values()] };
}

const ANONYMOUS = '$RCAnonymousID:';

/**
 * Both sides keyed by customer rather than by id: the ids a RevenueCat line names together, and
 * the ids this service knows a customer by (`known_as` of GET /v1/customers/{id}: an anonymous id
 * that logged in as them, or a merge), are one customer. A group is named by an id one side
 * holds access under, an identified one before an anonymous one, RevenueCat's before ours (then
 * the first in order), so a
 * purchase RevenueCat files under the last-seen id and this service under the anonymous id it
 * was made with compare as one. Access under several ids of a group is the later end.
 */
export function followAliases(
  theirs: AccessMap,
  ours: AccessMap,
  links: Iterable<[string, string]>,
  knownAs: Map<string, string[]>,
): { theirs: AccessMap; ours: AccessMap } {
  const parent = new Map<string, string>();
  const find = (x: string): string => {
    let root = x;
    while (parent.has(root) && parent.get(root) !== root) root = parent.get(root)!;
    parent.set(x, root);
    return root;
  };
  const union = (a: string, b: string) => {
    const [ra, rb] = [find(a), find(b)];
    if (ra !== rb) parent.set(ra, rb);
  };
  for (const [a, b] of links) union(a, b);
  for (const [id, others] of knownAs) for (const o of others) union(id, o);
  const candidates = new Map<string, string[]>();
  for (const id of [...theirs.keys(), ...ours.keys()]) {
    const list = candidates.get(find(id)) ?? [];
    list.push(id);
    candidates.set(find(id), list);
  }
  const rank = (id: string) => (id.startsWith(ANONYMOUS) ? 2 : 0) + (theirs.has(id) ? 0 : 1);
  const nameOf = (id: string) =>
    (candidates.get(find(id)) ?? [id]).sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0))[0];
  const rekey = (side: AccessMap) => {
    const out: AccessMap = new Map();
    for (const [id, access] of side) for (const [e, until] of access) put(out, nameOf(id), e, until);
    return out;
  };
  return { theirs: rekey(theirs), ours: rekey(ours) };
}

interface EntitlementRow {
  app_user_id: string;
  is_active: boolean;
  is_sandbox: boolean;
  sku: string | null;
  expires_at: string | null;
  grace_until: string | null;
}

/**
 * This service's side from its REST API (secret key: `subscribers:read`, `products:read`): every
 * active entitlement (paid, granted, provisional), named by its product's entitlement, ending at
 * the later of its period and its grace, as RevenueCat's SDKs are told.
 */
export async function readServiceAccess(cfg: ApiConfig, opts: { sandbox: boolean }): Promise<AccessMap> {
  const products = await listAll<{ sku: string; entitlement?: string }>(cfg, '/products');
  const bySku = new Map(products.map((p) => [p.sku, p.entitlement ?? DEFAULT_ENTITLEMENT]));
  const rows = await listAll<EntitlementRow>(cfg, '/entitlements');
  const map: AccessMap = new Map();
  for (const r of rows) {
    if (!r.is_active || r.is_sandbox !== opts.sandbox) continue;
    const ends = [r.expires_at, r.grace_until].filter((x): x is string => !!x).map((x) => Date.parse(x));
    const until = r.expires_at === null ? null : Math.max(...ends);
    put(map, r.app_user_id, (r.sku && bySku.get(r.sku)) ?? DEFAULT_ENTITLEMENT, until);
  }
  return map;
}

export interface AccessDifference {
  app_user_id: string;
  entitlement: string;
  kind: 'only_revenuecat' | 'only_here' | 'expiry_differs';
  revenuecat: string | null;
  here: string | null;
}

export interface Comparison {
  users: number;
  agreeing: number;
  differences: AccessDifference[];
}

const show = (until: number | null | undefined) =>
  until === undefined ? null : until === null ? 'never' : new Date(until).toISOString();

/** Both sides, app user by app user (sorted), entitlement by entitlement; ends within `toleranceMs` agree. */
export function compareAccess(theirs: AccessMap, ours: AccessMap, toleranceMs: number): Comparison {
  const users = [...new Set([...theirs.keys(), ...ours.keys()])].sort();
  const differences: AccessDifference[] = [];
  let agreeing = 0;
  for (const user of users) {
    const a = theirs.get(user) ?? new Map<string, number | null>();
    const b = ours.get(user) ?? new Map<string, number | null>();
    const before = differences.length;
    for (const e of [...new Set([...a.keys(), ...b.keys()])].sort()) {
      const [x, y] = [a.get(e), b.get(e)];
      const kind =
        y === undefined
          ? 'only_revenuecat'
          : x === undefined
            ? 'only_here'
            : (x === null) !== (y === null) || (x !== null && y !== null && Math.abs(x - y) > toleranceMs)
              ? 'expiry_differs'
              : null;
      if (kind) differences.push({ app_user_id: user, entitlement: e, kind, revenuecat: show(x), here: show(y) });
    }
    if (differences.length === before) agreeing++;
  }
  return { users: users.length, agreeing, differences };
}

/** One line per difference, as the command prints it. */
export function describeDifference(d: AccessDifference): string {
  if (d.kind === 'only_revenuecat')
    return `- ${d.app_user_id} ${d.entitlement}: active on RevenueCat until ${d.revenuecat}, not here`;
  if (d.kind === 'only_here')
    return `+ ${d.app_user_id} ${d.entitlement}: active here until ${d.here}, not on RevenueCat`;
  return `~ ${d.app_user_id} ${d.entitlement}: ends ${d.revenuecat} on RevenueCat, ${d.here} here`;
}

/** The most customers whose other ids are asked for (one request each): a comparison stays bounded. */
export const MAX_ALIAS_LOOKUPS = 1000;

/**
 * The other ids this service knows each of `ids` by (`known_as` of GET /v1/customers/{id}, scope
 * `customers:read`), at most MAX_ALIAS_LOOKUPS of them; an id it does not know has none. A key
 * without `customers:read` gets none, and says so (`refused`): the comparison then follows
 * RevenueCat's ids alone.
 */
export async function readKnownAs(
  cfg: ApiConfig,
  ids: string[],
): Promise<{ knownAs: Map<string, string[]>; refused: boolean }> {
  const knownAs = new Map<string, string[]>();
  for (const id of ids.slice(0, MAX_ALIAS_LOOKUPS)) {
    try {
      const r = await request<{ known_as?: string[] }>(cfg, 'GET', `/customers/${encodeURIComponent(id)}?limit=1`);
      if (r.body.known_as?.length) knownAs.set(id, r.body.known_as);
    } catch (e) {
      if (e instanceof CliFailure && e.status === 404) continue;
      if (e instanceof CliFailure && e.status === 403) return { knownAs: new Map(), refused: true };
      throw e;
    }
  }
  return { knownAs, refused: false };
}
