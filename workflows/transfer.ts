import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import {
  condition,
  defineSignal,
  log,
  ParentClosePolicy,
  proxyActivities,
  setHandler,
  startChild,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { ClaimedTransfer } from '../activities/store-purchases';
import { transferWorkflowId } from '../domain/transfers';
import { runAttributes } from './search-attributes';

const { closeTransferUndoWindow } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

export interface TransferInput {
  tenantId: string;
  transferId: string;
  /** As the transfer was written: waiting for a decision, or done with its undo window running. */
  status: 'pending' | 'completed';
  /** ISO end of the undo window (completed only). */
  undoUntil: string | null;
}

/**
 * What happened to the transfer, told by the operation that did it once its transaction
 * committed: approved (with the window's end), rejected or undone. `undoUntil` also re-arms the
 * timer on a completed transfer. Names the tenant, as every hand-over does.
 */
export interface TransferChange {
  tenantId: string;
  status: 'completed' | 'rejected' | 'undone';
  undoUntil?: string | null;
}
export const transferChangedSignal = defineSignal<[TransferChange]>('changed');

/**
 * One transfer (`transfer-<tenant>-<transfer>`, docs/transfers.md): while pending it waits for a
 * person's or the tenant's backend's decision (the review queue is bounded per tenant:
 * domain/transfers.ts); once completed it holds the undo window as a durable timer. The
 * deadline lives in the workflow's state, so a signal can re-arm it; when it passes, the window
 * is closed in the database (the transfer stands). Ids only in its history.
 */
export async function transferWorkflow(input: TransferInput): Promise<string> {
  let status: TransferInput['status'] | TransferChange['status'] = input.status;
  let undoUntil = input.undoUntil;
  let rearmed = false;
  setHandler(transferChangedSignal, (s) => {
    if (s.tenantId !== input.tenantId) {
      log.warn('transfer change for another tenant refused', { own: input.tenantId, named: s.tenantId });
      return;
    }
    status = s.status;
    if (s.undoUntil !== undefined) {
      undoUntil = s.undoUntil;
      rearmed = true;
    }
  });
  await condition(() => status !== 'pending');
  for (;;) {
    if (status !== 'completed') return status;
    rearmed = false;
    const wait = undoUntil ? Math.max(0, Date.parse(undoUntil) - Date.now()) : 0;
    if (await condition(() => status !== 'completed' || rearmed, wait)) continue;
    const closed = await closeTransferUndoWindow({ tenantId: input.tenantId, transferId: input.transferId });
    return closed === 'closed' ? 'window_closed' : closed;
  }
}

/**
 * Started by the workflow whose write made the transfer (a store registration, a web provider's
 * lifecycle). It outlives its starter (ABANDON); one already running (a repeat) is the one we want.
 */
export async function startTransfer(tenantId: string, provider: string, t: ClaimedTransfer): Promise<void> {
  try {
    await startChild(transferWorkflow, {
      workflowId: transferWorkflowId(tenantId, t.id),
      args: [{ tenantId, transferId: t.id, status: t.status, undoUntil: t.undo_until }],
      parentClosePolicy: ParentClosePolicy.ABANDON,
      typedSearchAttributes: runAttributes('transfer', tenantId, provider),
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}
