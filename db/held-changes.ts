import type { Knex } from 'knex';
import type { ChangeStatus } from '../domain/changes';

/**
 * Writes held for a person's approval (table `held_changes`, docs/approvals.md). Every move of
 * a change is one guarded update (`where status = 'pending_approval'`): approval, rejection and
 * expiry race, and the row decides which one won.
 */

export interface HeldChangeRow {
  id: string;
  tenant_id: string;
  operation: string;
  input: Record<string, unknown>;
  /** The key that asked, or null when an assistant did (`requested_by_assistant`). */
  requested_by_key: string | null;
  requested_by_assistant: string | null;
  surface: string;
  plan: HeldPlan;
  status: ChangeStatus;
  expires_at: Date;
  decided_by_user: string | null;
  decided_at: Date | null;
  outcome: Record<string, unknown> | null;
  created_at: Date;
  updated_at: Date;
}

/** What a person reads before deciding, and the state it was planned against. */
export interface HeldPlan {
  summary: string;
  /** Where the write lands: `catalogue` (this service) and/or the providers it calls. */
  targets: string[];
  /** The state the plan was made against (a fingerprint), compared again on approval; null: nothing to compare. */
  basis: string | null;
  /** The current values a person compares the input with (a product as it is), when there are some. */
  before?: Record<string, unknown> | null;
}

export async function insertHeldChange(
  trx: Knex.Transaction,
  row: {
    tenantId: string;
    operation: string;
    input: Record<string, unknown>;
    requestedBy: { keyId: string } | { assistantId: string };
    surface: string;
    plan: HeldPlan;
    expiresAt: Date;
  },
): Promise<HeldChangeRow> {
  const [out] = await trx('held_changes')
    .insert({
      tenant_id: row.tenantId,
      operation: row.operation,
      input: JSON.stringify(row.input),
      requested_by_key: 'keyId' in row.requestedBy ? row.requestedBy.keyId : null,
      requested_by_assistant: 'assistantId' in row.requestedBy ? row.requestedBy.assistantId : null,
      surface: row.surface,
      plan: JSON.stringify(row.plan),
      expires_at: row.expiresAt,
    })
    .returning('*');
  return out;
}

/** One change of the tenant (RLS: another tenant's is not found). */
export async function findHeldChange(trx: Knex.Transaction, id: string): Promise<HeldChangeRow | undefined> {
  return trx('held_changes').where({ id }).first();
}

/** The changes waiting for a person, newest first (bounded: the dashboard shows a page). */
export async function listPendingChanges(trx: Knex.Transaction, limit = 100): Promise<HeldChangeRow[]> {
  return trx('held_changes').where({ status: 'pending_approval' }).orderBy('created_at', 'desc').limit(limit);
}

/** The latest decided changes, newest first. */
export async function listDecidedChanges(trx: Knex.Transaction, limit = 20): Promise<HeldChangeRow[]> {
  return trx('held_changes').whereNot({ status: 'pending_approval' }).orderBy('updated_at', 'desc').limit(limit);
}

/**
 * Moves a pending change to a final status, once: false when it was no longer pending (another
 * decision or its expiry won). `stillOpen` also requires its expiry not to have passed.
 */
export async function settleHeldChange(
  trx: Knex.Transaction,
  id: string,
  to: Exclude<ChangeStatus, 'pending_approval'>,
  opts: { userId?: string; outcome?: Record<string, unknown>; stillOpen?: boolean } = {},
): Promise<boolean> {
  const q = trx('held_changes').where({ id, status: 'pending_approval' });
  if (opts.stillOpen) q.where('expires_at', '>', trx.fn.now());
  const n = await q.update({
    status: to,
    decided_by_user: opts.userId ?? null,
    decided_at: opts.userId ? trx.fn.now() : null,
    outcome: opts.outcome ? JSON.stringify(opts.outcome) : null,
    updated_at: trx.fn.now(),
  });
  return n > 0;
}

/**
 * Claims a pending, unexpired change for approval by locking its row: the caller's transaction
 * then holds it while the write runs, so an expiry or a second approval waits and finds it
 * decided. Undefined when it is not pending (or expired, or not the tenant's).
 */
export async function lockPendingChange(trx: Knex.Transaction, id: string): Promise<HeldChangeRow | undefined> {
  return trx('held_changes')
    .where({ id, status: 'pending_approval' })
    .where('expires_at', '>', trx.fn.now())
    .forUpdate()
    .first();
}
