import type { Knex } from 'knex';
import { pageFromSql, rows, type PageRequest, type PageSource, type RowPage } from './paging';

/** Reconciliation repairs (docs/reconciliation.md), in the caller's tenant transaction. */

/** One side of a comparison: the few facts compared, no personal data. */
export interface HeldState {
  status: string;
  current_period_end: string | null;
}

export interface NewRepair {
  tenantId: string;
  runId: string;
  /** A scheduled run's workflow (null: the refresh's, `refresh-<tenant>-<run>`); the customer's timeline names it. */
  workflowId?: string | null;
  provider: string;
  subscriptionId: string;
  appUserId: string | null;
  held: HeldState | null;
  providerState: HeldState & { cancel_at: string | null };
  /** The ids and kinds of the lifecycle events handed to the customer's workflow. */
  applied: { id: string; kind: string }[];
}

export async function recordRepair(trx: Knex.Transaction, r: NewRepair): Promise<{ id: string; created_at: Date }> {
  const [row] = await trx('reconciliations')
    .insert({
      tenant_id: r.tenantId,
      run_id: r.runId,
      workflow_id: r.workflowId ?? null,
      provider: r.provider,
      subscription_external_id: r.subscriptionId,
      app_user_id: r.appUserId,
      held: r.held ? JSON.stringify(r.held) : null,
      provider_state: JSON.stringify(r.providerState),
      applied: JSON.stringify(r.applied),
    })
    .returning(['id', 'created_at']);
  return row;
}

/** Newest first, filtered by run and provider. */
export function repairPage(
  src: PageSource,
  filters: { run_id?: string; provider?: string },
  page: PageRequest,
): Promise<RowPage> {
  return pageFromSql(
    src,
    { table: 'reconciliations', columns: 'reconciliations.*', from: 'reconciliations', filters },
    page,
    rows,
  );
}

/** What the service holds for the customer's subscriptions (tenant transaction: RLS scopes it). */
export async function heldSubscriptionsOf(
  trx: Knex.Transaction,
  appUserId: string,
): Promise<{ provider: string; external_id: string; status: string; current_period_end: Date | null; mode: string }[]> {
  return trx('subscriptions')
    .where({ app_user_id: appUserId })
    .select('provider', 'external_id', 'status', 'current_period_end', 'mode');
}

/** Whether the tenant knows this app user at all (a subscription, an entitlement or a store purchase). */
export async function customerKnown(trx: Knex.Transaction, appUserId: string): Promise<boolean> {
  const { rows: found } = await trx.raw(
    `select 1 from subscriptions where app_user_id = ? union all select 1 from entitlements where app_user_id = ? limit 1`,
    [appUserId, appUserId],
  );
  return found.length > 0;
}
