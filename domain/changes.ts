/**
 * A write that waits for a person (docs/approvals.md): the states a held change takes. Only
 * `pending_approval` moves; every other state is final.
 *
 * - `applied`: a person approved it and the write ran (its outcome says how it ended);
 * - `rejected`: a person refused it; nothing was written;
 * - `expired`: nobody decided before its expiry; nothing was written;
 * - `stale`: approved, but what it was planned against had moved (or the write was refused
 *   when it ran): it stopped, and nothing was written.
 */
export const CHANGE_STATUSES = ['pending_approval', 'applied', 'rejected', 'expired', 'stale'] as const;
export type ChangeStatus = (typeof CHANGE_STATUSES)[number];

/** How long a held change waits for a person when nothing else is configured: a day. */
export const DEFAULT_APPROVAL_EXPIRY_SECONDS = 24 * 3600;

/** The Temporal workflow of one held change: the tenant is part of its identity. */
export const changeWorkflowId = (tenantId: string, changeId: string) => `change-${tenantId}-${changeId}`;

/** Where a person decides: the dashboard's page of one change. */
export const changeDashboardUrl = (dashboardRoot: string, changeId: string) =>
  `${dashboardRoot.replace(/\/$/, '')}/changes/${changeId}`;

/** A held input's field kept sealed until a person approves (`<field>_sealed`, e.g. a file of Play purchase tokens). */
export const sealedField = (field: string) => `${field}_sealed`;

/** A held write's input as a person and the API read it: sealed fields left out (described in place). */
export function shownInput(input: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(input).filter(([k]) => !k.endsWith('_sealed')));
}

/** The vault's AAD of a held input's sealed field: bound to its tenant and field. */
export const heldFieldAad = (tenantId: string, field: string) => `${tenantId}:held_changes.input.${field}`;
