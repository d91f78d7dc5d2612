/**
 * Restores that move a purchase between app users (docs/transfers.md). Pure: the settings and
 * their bounds, what a registration of a purchase another app user holds does under each policy,
 * the states a transfer takes, and when an undo is still allowed. The store registration's claim
 * (activities/store-purchases.ts), the transfer operations (operations/transfers/) and the
 * transfer workflow (workflows/transfer.ts) all ask these.
 */

export const RESTORE_BEHAVIORS = ['keep_with_original', 'transfer', 'review'] as const;
export type RestoreBehavior = (typeof RESTORE_BEHAVIORS)[number];

/** How long a completed transfer can be undone, in hours: 0 (never) to 30 days; fractions allowed. */
export const UNDO_HOURS = { default: 72, min: 0, max: 720 } as const;

export interface TransferSettings {
  restore_behavior: RestoreBehavior;
  undo_hours: number;
}

export const DEFAULT_TRANSFER_SETTINGS: TransferSettings = {
  restore_behavior: 'keep_with_original',
  undo_hours: UNDO_HOURS.default,
};

/**
 * At most this many transfers of one tenant wait for a decision at once; a restore past it is
 * refused as under `keep_with_original` until some are decided (the review queue is bounded).
 */
export const MAX_PENDING_TRANSFERS = 1000;

export const TRANSFER_STATUSES = ['pending', 'completed', 'rejected', 'undone'] as const;
export type TransferStatus = (typeof TRANSFER_STATUSES)[number];

/**
 * What a registration does, by policy, when the purchase is held by someone:
 *
 * | holder | policy | outcome |
 * |---|---|---|
 * | nobody, or the caller | any | `proceed`: the caller registers it as today |
 * | another app user | `keep_with_original` | `refuse`: 409 purchase_token_reused, the holder keeps it |
 * | another app user | `transfer` | `transfer`: access moves to the caller at once (undoable) |
 * | another app user | `review` | `review`: a pending transfer; the holder keeps access until a decision |
 * | another app user | `review`, review queue full | `refuse` |
 *
 * A move keeps the purchase's mode: a sandbox purchase's rows stay sandbox (never live state or live charts).
 */
export type RestoreOutcome = 'proceed' | 'refuse' | 'transfer' | 'review';

export function restoreOutcome(input: {
  policy: RestoreBehavior;
  holder: string | null;
  caller: string;
  pendingCount?: number;
}): RestoreOutcome {
  if (input.holder === null || input.holder === input.caller) return 'proceed';
  switch (input.policy) {
    case 'keep_with_original':
      return 'refuse';
    case 'transfer':
      return 'transfer';
    case 'review':
      return (input.pendingCount ?? 0) >= MAX_PENDING_TRANSFERS ? 'refuse' : 'review';
  }
}

/**
 * A web provider's purchase whose events now name another app user than the one holding it (the
 * tenant's backend re-linked the provider's customer, or a checkout named someone else): the same
 * policy as a restore, with one difference. The provider's later events (every renewal) keep
 * naming the new app user, so a move already decided against — rejected, or undone — stands: the
 * holder keeps the purchase and nothing is asked again (`refuse`, quietly).
 */
export function relinkOutcome(input: {
  policy: RestoreBehavior;
  holder: string | null;
  named: string | null;
  decidedAgainst: boolean;
  pendingCount?: number;
}): RestoreOutcome {
  if (input.named === null) return 'proceed';
  const outcome = restoreOutcome({ ...input, caller: input.named });
  return outcome !== 'proceed' && input.decidedAgainst ? 'refuse' : outcome;
}

/**
 * The decisions a person (or the tenant's backend) takes, by the transfer's status:
 *
 * | status | approve | reject | undo |
 * |---|---|---|---|
 * | pending | → completed (access moves now; the undo window starts) | → rejected (nothing moves) | 409 |
 * | completed | 409 | 409 | → undone while now ≤ undo_until, else 409 |
 * | rejected, undone | 409 | 409 | 409 |
 */
export type TransferDecision = 'approve' | 'reject' | 'undo';

export type DecisionVerdict =
  | { ok: true; next: Exclude<TransferStatus, 'pending'> }
  | { ok: false; code: 'transfer_not_pending' | 'transfer_not_completed' | 'transfer_undo_expired'; detail: string };

export function decideTransfer(
  t: { status: TransferStatus; undo_until: string | null; window_closed: boolean },
  decision: TransferDecision,
  now: string,
): DecisionVerdict {
  if (decision === 'approve' || decision === 'reject') {
    if (t.status !== 'pending')
      return {
        ok: false,
        code: 'transfer_not_pending',
        detail: `This transfer is ${t.status}; only a pending transfer can be approved or rejected.`,
      };
    return { ok: true, next: decision === 'approve' ? 'completed' : 'rejected' };
  }
  if (t.status !== 'completed')
    return {
      ok: false,
      code: 'transfer_not_completed',
      detail: `This transfer is ${t.status}; only a completed transfer can be undone.`,
    };
  if (t.window_closed || t.undo_until === null || Date.parse(now) > Date.parse(t.undo_until))
    return {
      ok: false,
      code: 'transfer_undo_expired',
      detail: `The undo window ended${t.undo_until ? ` at ${t.undo_until}` : ''}; the transfer stands.`,
    };
  return { ok: true, next: 'undone' };
}

/** When a transfer completed at `completedAt` can no longer be undone. */
export function undoUntil(completedAt: string, undoHours: number): string {
  return new Date(Date.parse(completedAt) + Math.round(undoHours * 3_600_000)).toISOString();
}

/** `transfer-<tenant>-<transfer>`: the workflow that holds one transfer's decision and undo window. */
export const transferWorkflowId = (tenantId: string, transferId: string) => `transfer-${tenantId}-${transferId}`;

/** The outbound events a transfer sends (docs/outbound-webhooks.md). */
export const TRANSFER_EVENTS = ['transfer.pending', 'transfer.completed', 'transfer.undone'] as const;
export type TransferEvent = (typeof TRANSFER_EVENTS)[number];

/** The customer view's words for access a transfer brought (domain/entitlement-why.ts uses them). */
export const transferredExplanation = (from: string, at: string) =>
  `Premium since the transfer from ${from} (${at.slice(0, 10)}): a restore moved this purchase here.`;
