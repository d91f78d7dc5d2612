import { describe, expect, it } from 'vitest';
import { compareAccess, readRevenueCatExport, type AccessMap } from '../../cli/revenuecat-compare';

const NOW = Date.parse('2026-11-28T12:00:00Z');
const read = (csv: string, sandbox = false) => readRevenueCatExport(csv, { sandbox, now: NOW });
const asObject = (m: AccessMap) => Object.fromEntries([...m].map(([u, e]) => [u, Object.fromEntries(e)]));

describe('billing revenuecat:compare, the pure part', () => {
  it('reads the export’s column names either way, lists in any separator, dates as RevenueCat writes them', () => {
    const csv = [
      'rc_original_app_user_id,rc_last_seen_app_user_id_alias,entitlement_identifiers,effective_end_time,is_sandbox',
      '$RCAnonymousID:1,user-1,"[""pro"",""gold""]",2026-12-01 00:00:00,false',
      '$RCAnonymousID:2,,pro;gold,1796083200000,false',
      '$RCAnonymousID:3,user-3,pro,2026-11-01 00:00:00,false',
      '$RCAnonymousID:4,user-4,pro,,true',
      '$RCAnonymousID:5,user-5,lifetime,,false',
    ].join('\n');
    expect(asObject(read(csv))).toEqual({
      'user-1': { pro: Date.parse('2026-12-01T00:00:00Z'), gold: Date.parse('2026-12-01T00:00:00Z') },
      // No alias: the original id is the app user.
      '$RCAnonymousID:2': { pro: 1796083200000, gold: 1796083200000 },
      // user-3's access ended before now; user-4's is sandbox, read only with --sandbox.
      'user-5': { lifetime: null },
    });
    expect(asObject(read(csv, true))).toEqual({ 'user-4': { pro: null } });
  });

  it('a file without the columns, or with a date that is none, is refused naming what is missing', () => {
    expect(() => read('id,plan\n1,pro\n')).toThrow(/no app user id column/);
    expect(() => read('app_user_id,plan\n1,pro\n')).toThrow(/no entitlement column/);
    expect(() => read('app_user_id,entitlement_identifiers,expires_date\nu,pro,soon\n')).toThrow(
      /line 2: "soon" is not a date/,
    );
    expect(() => read('app_user_id,entitlement_identifiers\n,pro\n')).toThrow(/line 2: no app user id/);
  });

  // RevenueCat documents the Transactions feed's entitlement column as `entitlement_identifiers`, "an array of
  // entitlements that the transaction unlocked or null if it didn't unlock any entitlements" (string array, e.g.
  // ["membership", "full_access"]):
  // https://www.revenuecat.com/docs/integrations/scheduled-data-exports/data-export-version-5 ("Full export format"),
  // the same column in the Transactions feed page, https://www.revenuecat.com/docs/integrations/scheduled-data-exports/transactions
  it('reads the entitlements from the documented entitlement_identifiers column only, its null unlocking nothing', () => {
    const feed = [
      'rc_original_app_user_id;rc_last_seen_app_user_id_alias;entitlement_identifiers;active_entitlements;effective_end_time;is_sandbox',
      '$RCAnonymousID:1;user-1;"[""membership"",""full_access""]";gold;2026-12-01 00:00:00;false',
      // A transaction that unlocked nothing: the feed's null, written empty or as null; the other column is not read.
      '$RCAnonymousID:2;user-2;;gold;2026-12-01 00:00:00;false',
      '$RCAnonymousID:3;user-3;null;gold;2026-12-01 00:00:00;false',
    ].join('\n');
    const end = Date.parse('2026-12-01T00:00:00Z');
    expect(asObject(read(feed))).toEqual({ 'user-1': { membership: end, full_access: end } });
    // A list saved by hand without the feed's column: active_entitlements is read.
    expect(asObject(read('app_user_id,active_entitlements,expires_date\nu,pro,\n'))).toEqual({ u: { pro: null } });
    // Columns RevenueCat's export does not have are no entitlement column (entitlement_id is an object id in its API).
    expect(() => read('app_user_id,entitlement_id\nu,entl1a2b3c\n')).toThrow(
      /no entitlement column: expected one of entitlement_identifiers, active_entitlements/,
    );
    expect(() => read('app_user_id,entitlements\nu,pro\n')).toThrow(/no entitlement column/);
  });

  it('differences: only on one side, or ending apart by more than the tolerance; a user alike on both agrees', () => {
    const theirs: AccessMap = new Map([
      ['a', new Map([['pro', 1000_000]])],
      ['b', new Map([['pro', 1000_000]])],
      ['c', new Map<string, number | null>([['pro', null]])],
      ['d', new Map([['gold', 5]])],
    ]);
    const ours: AccessMap = new Map([
      ['a', new Map([['pro', 1000_500]])],
      ['b', new Map([['pro', 2000_000]])],
      ['c', new Map([['pro', 7]])],
      ['e', new Map<string, number | null>([['premium', null]])],
    ]);
    const r = compareAccess(theirs, ours, 1000);
    expect(r).toMatchObject({ users: 5, agreeing: 1 });
    expect(r.differences.map((d) => `${d.kind} ${d.app_user_id} ${d.entitlement}`)).toEqual([
      'expiry_differs b pro',
      'expiry_differs c pro',
      'only_revenuecat d gold',
      'only_here e premium',
    ]);
    expect(r.differences[1]).toMatchObject({ revenuecat: 'never', here: new Date(7).toISOString() });
  });
});
