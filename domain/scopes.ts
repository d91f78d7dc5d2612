/**
 * The roles (domain/roles.ts) that hold a write scope besides owners and admins, who hold every
 * scope (docs/team.md). A viewer holds no write; a `:read` scope reaches every role by itself, so
 * it names none.
 */
export type WriteHolder = 'developer' | 'support';

interface ScopeBase {
  /** What a key with the scope may do: the key form, the admin CLI's usage and the API reference say it. */
  description: string;
  /**
   * Set only on a scope no operation declares: the one line saying why a key carries it anyway
   * (scripts/operations-table.ts fails on a scope nothing uses and nothing explains).
   */
  carried?: string;
}
type ScopeDeclaration<S extends string> = S extends `${string}:read`
  ? ScopeBase & { roles?: never }
  : ScopeBase & { roles: readonly WriteHolder[] };

/** Holds each key of the table to its kind: a write names who holds it, a read does not. */
const scopeTable = <T extends { [S in keyof T & string]: ScopeDeclaration<S> }>(table: T) => table;

/**
 * The closed set of scopes a secret key can carry (spec: Authentication, plus the tool server's
 * four), each declared once: what it is for and, for a write, which roles hold it. The key form,
 * the admin CLI, the API reference and the roles (domain/roles.ts) are made from this table, in
 * its order; every operation's `scope` is one of these, and each of these is some operation's
 * (checked by scripts/operations-table.ts).
 */
export const SCOPE_TABLE = scopeTable({
  'readiness:read': { description: 'Read whether each app can take payments, per provider, and what is missing.' },
  'products:read': { description: 'Read products, their prices and the sync report and runs.' },
  'products:sync': {
    description: 'Push products and prices to the payment providers and stores.',
    roles: ['developer'],
  },
  'providers:read': { description: 'Read the connected payment providers and stores.' },
  'tenant:read': { description: 'Read the account: its plan, its limits and the key’s own scopes.' },
  'subscribers:read': { description: 'Read subscribers, their entitlements and the overview.' },
  'coupons:read': { description: 'Read coupons.' },
  'paywall:read': { description: 'Read the paywall and its draft.' },
  'webhooks:read': { description: 'Read received webhooks, webhook endpoints and their deliveries.' },
  'webhooks:write': {
    description: 'Add, change and delete webhook endpoints, rotate their secrets, replay deliveries.',
    roles: ['developer'],
  },
  'audit:read': { description: 'Read the audit trail and the changes waiting for approval.' },
  'apps:read': { description: 'Read apps, their publishable keys and the keys for RevenueCat’s SDKs.' },
  'apps:write': {
    description: 'Add apps, and make and revoke keys for RevenueCat’s SDKs.',
    roles: ['developer'],
  },
  'providers:write': {
    description: 'Attach a connected payment provider or store to an app.',
    roles: ['developer'],
  },
  'products:write': {
    description: 'Create, change, price and retire products.',
    roles: ['developer'],
  },
  'imports:read': { description: 'Read imports, reconciliations and their schedule.' },
  'imports:write': {
    description: 'Start imports, refresh a customer from the providers, change the reconciliation schedule.',
    // Refreshing a customer from the providers is an import's capability (docs/reconciliation.md).
    roles: ['developer', 'support'],
  },
  // The support desk (docs/support.md): one customer's page, and access granted by hand.
  'customers:read': { description: 'Read a customer’s page: purchases, events and notes.' },
  'grants:write': { description: 'Grant and revoke access by hand.', roles: ['support'] },
  // Notes the support desk writes on a customer (docs/support.md, "Notes").
  'customers:write': { description: 'Write notes on a customer and merge customers.', roles: ['support'] },
  // Erasing a customer's personal data (docs/support.md, "Erasure"): it cannot be undone, so it is a scope of
  // its own, held by owners and admins (and keys made with it), not by the support desk's role.
  'customers:erase': { description: 'Erase a customer’s personal data. This cannot be undone.', roles: [] },
  'charts:read': { description: 'Read charts and the exchange rates they convert money with.' },
  // The exchange rates charts convert money with (docs/charts.md, "Currencies"); read with charts:read.
  'charts:write': { description: 'Set and remove exchange rates.', roles: ['developer'] },
  // Restores that move a purchase between app users (docs/transfers.md): reading them and the settings;
  // deciding, undoing and changing the settings.
  'transfers:read': { description: 'Read purchase transfers between app users and their settings.' },
  'transfers:write': {
    description: 'Approve, reject and undo purchase transfers, and change their settings.',
    roles: ['developer', 'support'],
  },
  // Signed daily digests and exports of the tenant's data (docs/event-proofs.md, docs/exports.md).
  'exports:read': { description: 'Read signed daily digests, exports and their files, and the export destination.' },
  'exports:write': { description: 'Start an export of the account’s data.', roles: ['developer'] },
});

export type Scope = keyof typeof SCOPE_TABLE;

/** Every scope, in the table's order (the order the key form lists them in). */
export const SCOPES = Object.keys(SCOPE_TABLE) as readonly Scope[];

export function isScope(s: string): s is Scope {
  return Object.hasOwn(SCOPE_TABLE, s);
}

/** What a key with the scope may do, in a sentence. */
export function scopeDescription(scope: Scope): string {
  return SCOPE_TABLE[scope].description;
}

/** The roles besides owners and admins that hold a write scope (none for a read: those reach every role). */
export function writeHolders(scope: Scope): readonly WriteHolder[] {
  const declared: ScopeBase & { roles?: readonly WriteHolder[] } = SCOPE_TABLE[scope];
  return declared.roles ?? [];
}
