/** The closed set of scopes a secret key can carry (spec: Authentication, plus the tool server's four). */
export const SCOPES = [
  'readiness:read',
  'products:read',
  'products:sync',
  'providers:read',
  'tenant:read',
  'subscribers:read',
  'coupons:read',
  'paywall:read',
  'webhooks:read',
  'webhooks:write',
  'audit:read',
  'apps:read',
  'apps:write',
  'providers:write',
  'products:write',
  'imports:read',
  'imports:write',
  // The support desk (docs/support.md): one customer's page, and access granted by hand.
  'customers:read',
  'grants:write',
  // Notes the support desk writes on a customer (docs/support.md, "Notes").
  'customers:write',
  // Erasing a customer's personal data (docs/support.md, "Erasure"): it cannot be undone, so it is a scope of
  // its own, held by owners and admins (and keys made with it), not by the support desk's role.
  'customers:erase',
  'charts:read',
  // The exchange rates charts convert money with (docs/charts.md, "Currencies"); read with charts:read.
  'charts:write',
  // Restores that move a purchase between app users (docs/transfers.md): reading them and the settings;
  // deciding, undoing and changing the settings.
  'transfers:read',
  'transfers:write',
  // Signed daily digests and exports of the tenant's data (docs/event-proofs.md, docs/exports.md).
  'exports:read',
  'exports:write',
] as const;

export type Scope = (typeof SCOPES)[number];

export function isScope(s: string): s is Scope {
  return (SCOPES as readonly string[]).includes(s);
}
