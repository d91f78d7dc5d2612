import { describe, expect, it } from 'vitest';
import { compareAccess, followAliases, readRevenueCatCustomers, type AccessMap } from '../../cli/revenuecat-compare';

const NOW = Date.parse('2026-11-28T12:00:00Z');
const asObject = (m: AccessMap) => Object.fromEntries([...m].map(([u, e]) => [u, Object.fromEntries(e)]));

/**
 * RevenueCat's Transactions feed (Scheduled Data Exports) as delivered: semicolon-separated, the
 * customer named by `rc_original_app_user_id` and `rc_last_seen_app_user_id_alias`, access ending
 * at `effective_end_time`; and the comparison following both sides' aliases.
 */
describe('billing revenuecat:compare: RevenueCat’s delivered format, and one customer under several ids', () => {
  const feed = [
    'rc_original_app_user_id;rc_last_seen_app_user_id_alias;entitlement_identifiers;end_time;grace_period_end_time;effective_end_time;is_sandbox',
    '$RCAnonymousID:a1;user-17;"[""pro""]";2026-12-01 00:00:00;2026-12-04 00:00:00;2026-12-04 00:00:00;false',
    '$RCAnonymousID:b2;$RCAnonymousID:b2;pro;2026-12-10 00:00:00;;2026-12-10 00:00:00;false',
    'user-30;user-31;gold;2026-12-20 00:00:00;;2026-12-20 00:00:00;false',
  ].join('\n');

  it('reads the semicolon-separated feed: the last-seen id, access to effective_end_time (grace included)', () => {
    const { access, links } = readRevenueCatCustomers(feed, { sandbox: false, now: NOW });
    expect(asObject(access)).toEqual({
      'user-17': { pro: Date.parse('2026-12-04T00:00:00Z') },
      '$RCAnonymousID:b2': { pro: Date.parse('2026-12-10T00:00:00Z') },
      'user-31': { gold: Date.parse('2026-12-20T00:00:00Z') },
    });
    expect(links.sort()).toEqual([
      ['user-17', '$RCAnonymousID:a1'],
      ['user-31', 'user-30'],
    ]);
    // A comma-separated file is still read as before.
    const comma = readRevenueCatCustomers('app_user_id,entitlement_identifiers\nu1,pro\n', {
      sandbox: false,
      now: NOW,
    });
    expect(asObject(comma.access)).toEqual({ u1: { pro: null } });
  });

  it('a purchase RevenueCat files under one id and this service under another id of the same customer compares as one', () => {
    const { access, links } = readRevenueCatCustomers(feed, { sandbox: false, now: NOW });
    const ours: AccessMap = new Map([
      // Bought while anonymous here, then logged in as user-17 (an alias here): held under the anonymous id.
      ['$RCAnonymousID:ours-9', new Map([['pro', Date.parse('2026-12-04T00:00:00Z')]])],
      // RevenueCat's original id of user-31.
      ['user-30', new Map([['gold', Date.parse('2026-12-20T00:00:00Z')]])],
      ['$RCAnonymousID:b2', new Map([['pro', Date.parse('2026-12-10T00:00:00Z')]])],
    ]);
    // Without this service's aliases, the anonymous purchase here is a difference; RevenueCat's own link joins user-30.
    const plain = followAliases(access, ours, links, new Map());
    const before = compareAccess(plain.theirs, plain.ours, 0);
    expect(before.differences.map((d) => [d.kind, d.app_user_id])).toEqual([
      ['only_here', '$RCAnonymousID:ours-9'],
      ['only_revenuecat', 'user-17'],
    ]);
    // With them (known_as of GET /v1/customers/{id}), the customer is one and agrees, named by the identified id.
    const joined = followAliases(access, ours, links, new Map([['user-17', ['$RCAnonymousID:ours-9']]]));
    const after = compareAccess(joined.theirs, joined.ours, 0);
    expect(after).toEqual({ users: 3, agreeing: 3, differences: [] });
    expect([...joined.ours.keys()].sort()).toEqual(['$RCAnonymousID:b2', 'user-17', 'user-31']);
  });

  it('access under several ids of one customer is the later end, on either side', () => {
    const theirs: AccessMap = new Map([
      ['x', new Map([['pro', 10]])],
      ['y', new Map([['pro', 20]])],
    ]);
    const joined = followAliases(theirs, new Map(), [['x', 'y']], new Map());
    expect(asObject(joined.theirs)).toEqual({ x: { pro: 20 } });
  });
});
