import {
  lockTransfer,
  moveAccess,
  moveBack,
  purchaseOfTransfer,
  recordTransferEvent,
  transferSettings,
  undoUntilSql,
  updateTransfer,
  type MovedRows,
} from '../../db/transfers';
import { isUuid } from '../../domain/ids';
import { decideTransfer, type TransferDecision } from '../../domain/transfers';
import { transfersCounter } from '../../runtime/metrics';
import { tellTransfer } from '../../temporal/workflow-starts';
import { actorRef } from '../actor';
import { ApiError, notFound, serverMisconfigured } from '../errors';
import { iso, isoReq } from '../paging';
import type { OperationContext } from '../types';
import { renderTransfer } from './schema';

/**
 * Approve, reject or undo one transfer (docs/transfers.md): the rule is domain/transfers.ts
 * `decideTransfer`, judged by the database's clock under the transfer's row lock; the move (or
 * its undo) and the event are written in the same transaction, so nothing is half done. Then
 * the transfer's workflow is told (its undo timer starts on approval, and stops otherwise).
 */
export async function decide(ctx: OperationContext, id: string, decision: TransferDecision) {
  const temporal = ctx.services.temporal;
  if (!temporal) throw serverMisconfigured('TEMPORAL_ADDRESS');
  if (!isUuid(id)) throw notFound('transfer');
  const row = await ctx.tx(async (trx) => {
    const t = await lockTransfer(trx, id);
    if (!t) throw notFound('transfer');
    const verdict = decideTransfer(
      { status: t.status, undo_until: iso(t.undo_until), window_closed: !!t.window_closed_at },
      decision,
      isoReq(t.db_now),
    );
    if (!verdict.ok) throw new ApiError(409, verdict.code, verdict.detail);
    const purchase = purchaseOfTransfer(t);
    const by = actorRef(ctx.actor);
    if (decision === 'reject')
      return updateTransfer(trx, id, { status: 'rejected', decided_at: trx.fn.now(), decided_by: by });
    if (decision === 'approve') {
      const settings = await transferSettings(trx);
      const moved = await moveAccess(trx, ctx.tenantId, purchase, t.from_app_user_id, t.to_app_user_id);
      const done = await updateTransfer(trx, id, {
        status: 'completed',
        moved: JSON.stringify(moved),
        completed_at: trx.fn.now(),
        decided_at: trx.fn.now(),
        decided_by: by,
        undo_until: undoUntilSql(trx, settings.undo_hours),
      });
      await recordTransferEvent(trx, ctx.tenantId, 'transfer.completed', done);
      return done;
    }
    const moved = (typeof t.moved === 'string' ? JSON.parse(t.moved) : t.moved) as MovedRows;
    await moveBack(trx, ctx.tenantId, purchase, t.from_app_user_id, t.to_app_user_id, moved);
    const undone = await updateTransfer(trx, id, { status: 'undone', undone_at: trx.fn.now(), undone_by: by });
    await recordTransferEvent(trx, ctx.tenantId, 'transfer.undone', undone);
    return undone;
  });
  transfersCounter.inc({ policy: row.policy, outcome: row.status });
  try {
    await tellTransfer(
      temporal.client,
      ctx.services.config.taskQueue,
      {
        tenantId: ctx.tenantId,
        transferId: row.id,
        provider: row.provider,
        status: decision === 'approve' || decision === 'reject' ? 'pending' : 'completed',
        undoUntil: decision === 'undo' ? iso(row.undo_until) : null,
      },
      {
        tenantId: ctx.tenantId,
        status: row.status,
        ...(decision === 'approve' ? { undoUntil: iso(row.undo_until) } : {}),
      },
    );
  } catch (err) {
    // The decision stands once committed; an undo past the window is refused by the database's clock either way.
    ctx.log.warn({ err: { message: (err as Error).message }, request_id: ctx.requestId }, 'transfer workflow not told');
  }
  return renderTransfer(row);
}
