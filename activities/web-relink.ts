import type { Knex } from 'knex';
import { lockStorePurchase } from '../db/store-purchases';
import {
  insertTransfer,
  moveAccess,
  pendingTransferCount,
  pendingTransferOf,
  recordRefusal,
  recordTransferEvent,
  refusedBefore,
  transferSettings,
  type PurchaseRef,
} from '../db/transfers';
import { relinkOutcome, type RestoreBehavior } from '../domain/transfers';
import type { SubscriptionView } from '../domain/subscription';
import type { ClaimedTransfer } from './store-purchases';

export interface RelinkResult {
  /** The app user the subscription and its entitlement are written for. */
  appUserId: string | null;
  /** A transfer this write made: its workflow is started by the lifecycle (workflows/transfer.ts). */
  transfer?: ClaimedTransfer;
  /** What to count once the transaction has committed (`billing_transfers_total`). */
  counted?: { policy: RestoreBehavior; outcome: 'refused' | 'pending' | 'completed' };
}

/**
 * A web provider's subscription whose events name another app user (`s.app_user_id`) than the one
 * its record holds (`holder`; the record's write kept it: db/subscriptions.ts) — docs/transfers.md,
 * "Web purchases re-linked": the tenant's restore policy decides, as for a store restore
 * (domain/transfers.ts `relinkOutcome`). Before this the record silently followed the new name
 * while the holder's entitlement stayed behind, never updated again (a refund revoked only the new
 * one). Run in the lifecycle's tenant transaction after the record's write, before the
 * entitlement's; answers whom the entitlement is for.
 */
export async function applyRelinkPolicy(
  trx: Knex.Transaction,
  tenantId: string,
  provider: string,
  s: SubscriptionView,
  holder: string,
): Promise<RelinkResult> {
  const named = s.app_user_id;
  if (named === null || named === holder) return { appUserId: holder };
  await lockStorePurchase(trx, tenantId, provider, s.external_id);
  const purchase: PurchaseRef = { provider, tokenHash: s.external_id, externalId: s.external_id };
  const settings = await transferSettings(trx);
  const policy = settings.restore_behavior;
  const decidedAgainst = await refusedBefore(trx, purchase, holder, named);
  const outcome = relinkOutcome({
    policy,
    holder,
    named,
    decidedAgainst,
    pendingCount: policy === 'review' ? await pendingTransferCount(trx) : 0,
  });
  const claimed = (t: Record<string, unknown>): ClaimedTransfer => ({
    id: String(t.id),
    status: t.status as ClaimedTransfer['status'],
    undo_until: t.undo_until ? new Date(t.undo_until as string).toISOString() : null,
  });
  // Refused (or already decided against): the holder keeps it; the later events change only its state.
  if (outcome === 'refuse' || outcome === 'proceed') {
    // A refusal is counted once, when it is first decided: the provider's later events repeat the same
    // name, and a move rejected or undone before was counted as that.
    const first =
      outcome === 'refuse' && !decidedAgainst && (await recordRefusal(trx, tenantId, purchase, holder, named, policy));
    return first ? { appUserId: holder, counted: { policy, outcome: 'refused' } } : { appUserId: holder };
  }
  const isSandbox = s.mode === 'test';
  if (outcome === 'review') {
    // One pending transfer per purchase: the provider's next events find it waiting and ask nothing more.
    if (await pendingTransferOf(trx, purchase)) return { appUserId: holder };
    const t = await insertTransfer(trx, {
      tenantId,
      status: 'pending',
      policy: 'review',
      purchase,
      from: holder,
      to: named,
      isSandbox,
    });
    await recordTransferEvent(trx, tenantId, 'transfer.pending', t);
    return { appUserId: holder, transfer: claimed(t), counted: { policy, outcome: 'pending' } };
  }
  const moved = await moveAccess(trx, tenantId, purchase, holder, named);
  const t = await insertTransfer(trx, {
    tenantId,
    status: 'completed',
    policy: 'transfer',
    purchase,
    from: holder,
    to: named,
    isSandbox,
    moved,
    undoHours: settings.undo_hours,
  });
  await recordTransferEvent(trx, tenantId, 'transfer.completed', t);
  return { appUserId: named, transfer: claimed(t), counted: { policy, outcome: 'completed' } };
}
