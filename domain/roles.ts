import { SCOPES, type Scope } from './scopes';

/**
 * What a person in the dashboard may do. Every member is an `owner` today: an owner may run every
 * operation, the dashboard-only ones (keys, provider credentials) included.
 */
export const ROLES = ['owner'] as const;
export type Role = (typeof ROLES)[number];

const ROLE_SCOPES: Record<Role, readonly Scope[]> = { owner: SCOPES };

export function scopesOfRole(role: Role): Scope[] {
  return [...ROLE_SCOPES[role]];
}

/** Whether a role carries a scope (an operation open to keys); dashboard-only operations ask `mayManageAccount`. */
export function roleHasScope(role: Role, scope: Scope): boolean {
  return ROLE_SCOPES[role].includes(scope);
}

/** Keys, provider credentials, webhook secrets: operations no key can run. */
export function mayManageAccount(role: Role): boolean {
  return role === 'owner';
}
