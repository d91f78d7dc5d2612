import { describe, expect, it } from 'vitest';
import { beyondCeiling, ceilingOfGrant, keyCeilingOf } from '../../domain/roles';

/**
 * The rule for `require_approval` (docs/team.md, "Keys a member mints"): a person whose own writes
 * wait for approval cannot mint a key whose writes would not. No role's writes wait today, so the
 * rule is shown on a role grant that says they do, as a line of ROLE_TABLE would.
 */
describe('a key ceiling (domain/roles.ts)', () => {
  const waits = ceilingOfGrant({ scopes: ['products:read', 'products:write'], writesNeedApproval: true });

  it('a person whose writes wait for approval cannot drop it from a key they mint', () => {
    expect(waits.approvalRequired).toBe(true);
    expect(beyondCeiling(waits, { scopes: ['products:write'], requireApproval: false })).toEqual({
      scopes: [],
      dropsApproval: true,
    });
    expect(beyondCeiling(waits, { scopes: ['products:write'], requireApproval: true })).toBeUndefined();
  });

  it('one whose writes run may mint either, within their scopes; a scope beyond them is named', () => {
    const runs = ceilingOfGrant({ scopes: ['products:read'] });
    expect(beyondCeiling(runs, { scopes: ['products:read'], requireApproval: false })).toBeUndefined();
    expect(beyondCeiling(runs, { scopes: ['products:read'], requireApproval: true })).toBeUndefined();
    expect(beyondCeiling(runs, { scopes: ['products:read', 'grants:write'], requireApproval: false })).toEqual({
      scopes: ['grants:write'],
      dropsApproval: false,
    });
  });

  it("a developer's ceiling holds no access grants", () => {
    expect(keyCeilingOf('developer').scopes).not.toContain('grants:write');
    expect(keyCeilingOf('admin').scopes).toContain('grants:write');
  });
});
