import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { z } from 'zod';
import { subjectOf } from '../../domain/drift';
import { type SyncOutcome, type SyncRefusal } from '../../domain/sync-plan';
import { startSyncRun } from '../../temporal/workflow-starts';
import type { SyncRunAnswer, SyncRunInput, SyncRunResult } from '../../workflows/sync-run';
import { ApiError, serverMisconfigured } from '../errors';
import { type OperationContext } from '../types';

export const outcome = z.object({ subject: z.string(), ok: z.boolean(), skipped: z.boolean(), detail: z.string() });

export function temporalOf(ctx: OperationContext) {
  if (!ctx.services.temporal) throw serverMisconfigured('TEMPORAL_ADDRESS');
  return ctx.services.temporal.client;
}
export const renderOutcome = (o: SyncOutcome) => ({
  subject: subjectOf(o),
  ok: o.ok,
  skipped: o.skipped,
  detail: o.detail,
});

/** A run's refusal, answered with the status its code has always had. */
export function refusalError(r: SyncRefusal): ApiError {
  if (r.refused === 'drift_incomplete') return new ApiError(503, 'drift_incomplete', r.detail);
  if (r.refused === 'count_mismatch')
    return new ApiError(409, 'count_mismatch', r.detail, {
      expected: r.expected,
      received: r.received,
      requiresConfirmation: true,
    });
  return new ApiError(409, 'sync_in_progress', r.detail);
}

export const isRefusal = (a: SyncRunAnswer | { accepted: true }): a is SyncRefusal => 'refused' in a;

/** Start the run's workflow (it gates, takes the drain lock and plans itself). */
export async function launch(ctx: OperationContext, input: SyncRunInput) {
  try {
    return await startSyncRun(temporalOf(ctx), ctx.services.config.taskQueue, input);
  } catch (e) {
    if (e instanceof WorkflowExecutionAlreadyStartedError)
      throw new ApiError(409, 'sync_in_progress', 'That run is already running.');
    throw e;
  }
}

/** The run's answer, or its refusal as the API error. */
export async function outcomeOf(handle: Awaited<ReturnType<typeof launch>>): Promise<SyncRunResult> {
  const answer = (await handle.result()) as SyncRunAnswer;
  if (isRefusal(answer)) throw refusalError(answer);
  return answer;
}

export const verdict = z.object({
  provider: z.string(),
  mode: z.string().describe('live, test, or - when the provider was not used'),
  ok: z.boolean(),
  synced: z.number().int(),
  detail: z.string(),
});
