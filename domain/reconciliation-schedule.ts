import { STORE_PROVIDERS, WEB_PROVIDERS, type ProviderId } from './providers';

/**
 * The scheduled reconciliation (docs/reconciliation.md, "Scheduled"): per tenant, one Temporal
 * Schedule for the web providers and one for the stores, each re-reading the subscriptions that
 * could have changed. Pure rules: the groups, the intervals and their bounds, the identities, and
 * the windows that make a subscription a candidate.
 */

export const RECONCILIATION_GROUPS = ['web', 'stores'] as const;
export type ReconciliationGroup = (typeof RECONCILIATION_GROUPS)[number];

/** The provider kinds a group's runs compare. */
export const GROUP_PROVIDERS: Record<ReconciliationGroup, readonly ProviderId[]> = {
  web: WEB_PROVIDERS,
  stores: STORE_PROVIDERS,
};

/**
 * Minutes between runs: defaults (hourly for web providers, whose webhooks are the ones that get
 * lost; daily for the stores, whose server APIs are slower and rate-limited per hour) and the
 * bounds a tenant may set. The lower bounds keep a run from starting before the last one could
 * finish on a large account; the upper ones keep drift from living longer than a week.
 */
export const INTERVALS: Record<ReconciliationGroup, { default: number; min: number; max: number }> = {
  web: { default: 60, min: 15, max: 1440 },
  stores: { default: 1440, min: 60, max: 10080 },
};

export interface ReconciliationSettings {
  enabled: boolean;
  web_interval_minutes: number;
  stores_interval_minutes: number;
}

export const DEFAULT_SETTINGS: ReconciliationSettings = {
  enabled: true,
  web_interval_minutes: INTERVALS.web.default,
  stores_interval_minutes: INTERVALS.stores.default,
};

export const intervalOf = (s: ReconciliationSettings, g: ReconciliationGroup): number =>
  g === 'web' ? s.web_interval_minutes : s.stores_interval_minutes;

/** `reconcile-<tenant>-web` or `-stores`: the Schedule's id, and the prefix of each run's workflow id. */
export const reconciliationScheduleId = (tenantId: string, group: ReconciliationGroup) =>
  `reconcile-${tenantId}-${group}`;

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const RUN_ID_RE = new RegExp(`^reconcile-(${UUID})-(web|stores)(?:-|$)`);

/**
 * A scheduled run's tenant and group, from its workflow id (the Schedule appends the scheduled
 * time to its own id). The run takes no arguments: a schedule's arguments would be encrypted
 * bound to the schedule's id, not to the run's (docs/temporal.md, "Payloads are encrypted").
 */
export function parseRunWorkflowId(workflowId: string): { tenantId: string; group: ReconciliationGroup } | null {
  const m = RUN_ID_RE.exec(workflowId);
  return m ? { tenantId: m[1], group: m[2] as ReconciliationGroup } : null;
}

/**
 * Where in its interval a tenant's runs fall, from its id: tenants spread over the hour (or day)
 * instead of all starting at its top. A small string hash (domain/ has no crypto): spreading
 * needs no secrecy.
 */
export function offsetMinutes(tenantId: string, intervalMinutes: number): number {
  let h = 0;
  for (let i = 0; i < tenantId.length; i++) h = (Math.imul(h, 31) + tenantId.charCodeAt(i)) >>> 0;
  return h % intervalMinutes;
}

/**
 * What makes a subscription a candidate of a run, relative to the run's start (`asOf`):
 * - recently active: created or changed in the last `recentDays` (a refund, a cancellation or a
 *   failed charge mostly follows a purchase or a renewal within days, and its webhook is what
 *   gets lost);
 * - in grace or billing retry (`past_due`), whatever its age;
 * - near renewal: its paid period ends within `renewalAheadHours`, or ended in the last
 *   `renewalPastHours` (a renewal or a lapse whose webhook never came);
 * - touched by a refused or failed webhook delivery in the last `recentDays`.
 */
export const CANDIDATE_WINDOWS = { recentDays: 7, renewalAheadHours: 24, renewalPastHours: 72 } as const;

/** Customers per page of a run (each page one activity, heartbeating per customer). */
export const CUSTOMERS_PER_PAGE = 50;
/** Pages per workflow run before continue-as-new: the history holds a few pages, never the account. */
export const PAGES_PER_RUN = 40;
