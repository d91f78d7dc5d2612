import crypto from 'node:crypto';
import { z } from 'zod';
import { syncGateOf } from '../../temporal/workflow-starts';
import { actorRef } from '../actor';
import { id } from '../schemas';
import { defineOperation } from '../types';
import { isRefusal, launch, refusalError, outcome, outcomeOf, renderOutcome } from './launch';
import { findingRow, renderFinding } from './report';
const syncBody = z.object({
  ok: z.boolean(),
  synced: z.number().int().describe('product/provider pairs written'),
  priced_locales: z.number().int(),
  skipped: z.array(outcome).describe('a provider that could not be used, with the reason; not a success'),
  failed: z.array(outcome),
  needs_human: z.array(findingRow).describe('findings no automated drain can close'),
  run_id: id('the sync run'),
});
const accepted = z.object({ run_id: id('the sync run'), status: z.literal('running') });
const countMismatch = z.object({
  error: z.literal('count_mismatch'),
  detail: z.string(),
  expected: z.number().int(),
  received: z.number().int().nullable(),
  requiresConfirmation: z.boolean(),
});

export const runSync = defineOperation({
  name: 'sync.run',
  summary:
    'Drain the drift report: create and update products, prices, payment links and plans at every provider, in every configured mode',
  scope: 'products:sync',
  write: true,
  input: z
    .object({
      confirm_count: z
        .number()
        .int()
        .min(0)
        .nullable()
        .optional()
        .describe('the confirm_count of the drift report you read'),
    })
    .strict(),
  output: syncBody,
  rest: { method: 'POST', path: '/sync' },
  errors: [409, 503],
  responses: {
    202: {
      description:
        'Accepted (Prefer: respond-async): the run passed the gate and goes on; follow it with GET /sync/events?run_id=',
      schema: accepted,
    },
    409: {
      description: 'count_mismatch (with the CountMismatch fields) or sync_in_progress',
      schema: z.union([countMismatch, z.object({ error: z.string(), detail: z.string() })]),
    },
  },
  tool: {
    name: 'billing_sync_run',
    title: 'Sync Run',
    description: 'Run the sync drain. Needs confirm_count from billing_sync_report; writes to live providers.',
    // Writes products, prices, payment links and plans at every provider, in every mode.
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  },
  async handler(ctx, input) {
    // One workflow does it all: reads the providers, judges drift, checks the count, takes the lock, drains.
    const runId = crypto.randomUUID();
    const handle = await launch(ctx, {
      tenantId: ctx.tenantId,
      runId,
      kind: 'sync',
      requestedBy: actorRef(ctx.actor),
      confirmCount: input.confirm_count ?? null,
    });
    if (ctx.preferAsync) {
      // 202 only once the gate passed: a refusal keeps its own code. A run that ended before the
      // update reached it (refused at once) answers through its result instead.
      const gate = await syncGateOf(handle).catch(() => outcomeOf(handle).then(() => ({ accepted: true as const })));
      if (isRefusal(gate)) throw refusalError(gate);
      ctx.response.status = 202;
      ctx.response.headers['Preference-Applied'] = 'respond-async';
      return { run_id: runId, status: 'running' as const };
    }
    const { verdicts: _verdicts, ...result } = await outcomeOf(handle);
    return {
      ...result,
      skipped: result.skipped.map(renderOutcome),
      failed: result.failed.map(renderOutcome),
      needs_human: result.needs_human.map(renderFinding),
    };
  },
});
