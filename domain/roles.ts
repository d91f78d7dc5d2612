import { SCOPES, writeHolders, type Scope, type WriteHolder } from './scopes';

/**
 * What a person in the dashboard may do (docs/team.md). ONE table, `ROLE_TABLE`, answers it for
 * every surface that asks: the operation policy (operations/policy.ts), the pages' gate and the
 * navigation (api/dashboard/page-access.ts), and the team page's descriptions.
 */
export const ROLES = ['owner', 'admin', 'developer', 'support', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

/**
 * The dashboard-only operations (no key may run them), by what they touch:
 * - `credentials`: secret keys, provider credentials, webhook secrets, the paywall;
 * - `team`: inviting people, changing roles, removing members, disconnecting members' assistants;
 * - `approvals`: approving or rejecting a write a key asked for (docs/approvals.md);
 * - `assistants`: connecting an assistant to act for oneself, listing and disconnecting one's own
 *   (docs/assistant-sign-in.md). Every role has it: what the assistant may do is bounded by the
 *   person's role anyway (`rolesWithin`, `assistantScopesOf`).
 */
export const ACCOUNT_AREAS = ['credentials', 'team', 'approvals', 'assistants'] as const;
export type AccountArea = (typeof ACCOUNT_AREAS)[number];

/** Every read scope: a scope added later that ends in `:read` reaches every role that reads. */
const READS: readonly Scope[] = SCOPES.filter((s) => s.endsWith(':read'));

interface RoleGrant {
  /** Shown on the team page next to the role. */
  summary: string;
  scopes: readonly Scope[];
  account: readonly AccountArea[];
  /**
   * The person's own writes wait for another person's approval (docs/approvals.md). No role's do
   * today; `keyCeilingOf` keeps such a person from minting a key that would not wait.
   */
  writesNeedApproval?: boolean;
}

/** The write scopes a role holds: the scope table says who holds each (domain/scopes.ts). */
function writesOf(role: WriteHolder): Scope[] {
  return SCOPES.filter((s) => writeHolders(s).includes(role));
}

const ROLE_TABLE: Record<Role, RoleGrant> = {
  owner: { summary: 'Everything, including the team and other owners.', scopes: SCOPES, account: ACCOUNT_AREAS },
  admin: {
    summary: 'Everything, including the team; cannot make, change or remove owners.',
    scopes: SCOPES,
    account: ACCOUNT_AREAS,
  },
  developer: {
    summary: 'Keys, webhooks, providers, products and imports; no access grants, no team.',
    scopes: [...READS, ...writesOf('developer')],
    account: ['credentials', 'assistants'],
  },
  support: {
    summary: 'Reads everything but keys and credentials; answers customers (grants, refresh, notes, transfers).',
    scopes: [...READS, ...writesOf('support')],
    account: ['assistants'],
  },
  viewer: {
    summary: 'Reads everything but keys and credentials; changes nothing.',
    scopes: [...READS],
    account: ['assistants'],
  },
};

export function roleSummary(role: Role): string {
  return ROLE_TABLE[role].summary;
}

export function scopesOfRole(role: Role): Scope[] {
  return [...ROLE_TABLE[role].scopes];
}

/**
 * What an assistant a person connected may do (docs/assistant-sign-in.md): the scopes of the role
 * the person gave it, within the person's role now — never more than either.
 */
export function assistantScopesOf(given: Role, person: Role): Scope[] {
  return scopesOfRole(given).filter((s) => roleHasScope(person, s));
}

/** The roles a person may give an assistant: their own, or any whose every scope theirs carries. */
export function rolesWithin(role: Role): Role[] {
  return ROLES.filter((r) => scopesOfRole(r).every((s) => roleHasScope(role, s)));
}

/** Whether a role carries a scope (an operation open to keys); dashboard-only operations ask `mayManageAccount`. */
export function roleHasScope(role: Role, scope: Scope): boolean {
  return ROLE_TABLE[role].scopes.includes(scope);
}

/** Whether a role may run the dashboard-only operations of an area. */
export function mayManageAccount(role: Role, area: AccountArea): boolean {
  return ROLE_TABLE[role].account.includes(area);
}

/** What a page, a form or an operation needs: a scope, or an account area. */
export type Need = { scope: Scope } | { account: AccountArea };

export function roleMay(role: Role, need: Need): boolean {
  return 'scope' in need ? roleHasScope(role, need.scope) : mayManageAccount(role, need.account);
}

/**
 * Whether `actor` may give `target` a role, or change or remove a member who holds `target`:
 * only an owner touches the owner role; anyone who manages the team touches the others.
 */
export function mayAssignRole(actor: Role, target: Role): boolean {
  if (!mayManageAccount(actor, 'team')) return false;
  return target !== 'owner' || actor === 'owner';
}

/** The roles `actor` may not hand out: a member demoted to `actor` loses their pending invitations for these. */
export function rolesNotAssignableBy(actor: Role): Role[] {
  return ROLES.filter((r) => !mayAssignRole(actor, r));
}

/**
 * A role is a ceiling for the keys its members mint (docs/team.md, "Keys a member mints"): the
 * scopes a key may carry and whether it must ask for approval. The key form offers this and the
 * key-creation operation holds to it.
 */
export interface KeyCeiling {
  scopes: Scope[];
  /** A key minted by such a person must require approval: their own writes would wait for one. */
  approvalRequired: boolean;
}

export function keyCeilingOf(role: Role): KeyCeiling {
  return ceilingOfGrant(ROLE_TABLE[role]);
}

/** The rule on a role's grant, whatever the role (a role whose writes wait is one line of the table away). */
export function ceilingOfGrant(grant: Pick<RoleGrant, 'scopes' | 'writesNeedApproval'>): KeyCeiling {
  // In the order of SCOPES, as the key form lists them.
  return {
    scopes: SCOPES.filter((s) => grant.scopes.includes(s)),
    approvalRequired: grant.writesNeedApproval === true,
  };
}

/** What a key request asks beyond a ceiling: the scopes it may not carry, and an approval it may not drop. */
export function beyondCeiling(
  ceiling: KeyCeiling,
  request: { scopes: readonly Scope[]; requireApproval: boolean },
): { scopes: Scope[]; dropsApproval: boolean } | undefined {
  const scopes = request.scopes.filter((s) => !ceiling.scopes.includes(s));
  const dropsApproval = ceiling.approvalRequired && !request.requireApproval;
  return scopes.length || dropsApproval ? { scopes, dropsApproval } : undefined;
}
