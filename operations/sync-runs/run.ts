import crypto from 'node:crypto';
import { z } from 'zod';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { driftFindings, DRIFT_KINDS, subjectOf, type DriftFinding } from '../../domain/drift';
import { isUuid } from '../../domain/ids';
import { confirmCountOf, driftIncomplete, syncTargets, unreadTargets, type SyncOutcome, type SyncRefusal } from '../../domain/sync-plan';
import { driftDbFacts, productToSync, providerSetupFacts } from '../../db/sync-facts';
import { readDriftSnapshots, startSyncRun, syncGateOf } from '../../temporal/workflow-starts';
import type { SyncRunAnswer, SyncRunInput, SyncRunResult } from '../../workflows/sync-run';
import { ApiError, notFound, serverMisconfigured } from '../errors';
import { defineOperation, type OperationContext } from '../types';
import { actorRef } from '../actor';
import { id, provider } from '../schemas';

const findingRow = z.object({
  kind: z.enum(DRIFT_KINDS),
  subject: z.string().describe('provider:<provider> or product:<sku>'),
  provider: provider.nullable(),
  mode: z.enum(['live', 'test']).nullable(),
  automatable: z.boolean().describe('a sync can close it; false means it goes to needs_human'),
  detail: z.string(),
});
const driftBody = z.object({
  tenant_id: id(),
  confirm_count: z.number().int().describe('echo it in POST /sync'),
  findings: z.array(findingRow),
});
const outcome = z.object({ subject: z.string(), ok: z.boolean(), skipped: z.boolean(), detail: z.string() });
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
const verdict = z.object({
  provider: z.string(),
  mode: z.string().describe('live, test, or - when the provider was not used'),
  ok: z.boolean(),
  synced: z.number().int(),
  detail: z.string(),
});
const productSyncBody = z.object({
  product_id: id(),
  sku: z.string(),
  run_id: id('the sync run'),
  ok: z.boolean().describe('false when any provider failed or was skipped: inspect verdicts'),
  synced: z.number().int(),
  verdicts: z.array(verdict),
});

function temporalOf(ctx: OperationContext) {
  if (!ctx.services.temporal) throw serverMisconfigured('TEMPORAL_ADDRESS');
  return ctx.services.temporal.client;
}

// ── Rendering: structured findings and outcomes become the API's rows (subject strings) here only.
const renderFinding = (f: DriftFinding) => ({ kind: f.kind, subject: subjectOf(f), provider: f.provider, mode: f.mode, automatable: f.automatable, detail: f.detail });
const renderOutcome = (o: SyncOutcome) => ({ subject: subjectOf(o), ok: o.ok, skipped: o.skipped, detail: o.detail });

/** A run's refusal, answered with the status its code has always had. */
function refusalError(r: SyncRefusal): ApiError {
  if (r.refused === 'drift_incomplete') return new ApiError(503, 'drift_incomplete', r.detail);
  if (r.refused === 'count_mismatch') return new ApiError(409, 'count_mismatch', r.detail, { expected: r.expected, received: r.received, requiresConfirmation: true });
  return new ApiError(409, 'sync_in_progress', r.detail);
}

const isRefusal = (a: SyncRunAnswer | { accepted: true }): a is SyncRefusal => 'refused' in a;

/** The drift report as of now (GET /v1/sync): every provider read, or 503 naming those that could not be. */
async function currentDrift(ctx: OperationContext): Promise<DriftFinding[]> {
  const setups = await ctx.tx((trx) => providerSetupFacts(trx));
  const targets = syncTargets(setups);
  const outcomes = targets.length ? await readDriftSnapshots(temporalOf(ctx), ctx.services.config.taskQueue, ctx.tenantId, crypto.randomUUID(), targets) : [];
  const incomplete = driftIncomplete(unreadTargets(outcomes));
  if (incomplete) throw refusalError(incomplete);
  const snapshots = new Map(outcomes.map((o) => [`${o.target.provider}:${o.target.mode}`, o.snapshot!]));
  return driftFindings(await ctx.tx((trx) => driftDbFacts(trx, setups, snapshots)));
}

/** Start the run's workflow (it gates, takes the drain lock and plans itself). */
async function launch(ctx: OperationContext, input: SyncRunInput) {
  try {
    return await startSyncRun(temporalOf(ctx), ctx.services.config.taskQueue, input);
  } catch (e) {
    if (e instanceof WorkflowExecutionAlreadyStartedError) throw new ApiError(409, 'sync_in_progress', 'That run is already running.');
    throw e;
  }
}

/** The run's answer, or its refusal as the API error. */
async function outcomeOf(handle: Awaited<ReturnType<typeof launch>>): Promise<SyncRunResult> {
  const answer = (await handle.result()) as SyncRunAnswer;
  if (isRefusal(answer)) throw refusalError(answer);
  return answer;
}

export const getSyncReport = defineOperation({
  name: 'sync.report',
  summary: 'Drift report: every divergence between the service and its providers, and the count to confirm',
  scope: 'products:read',
  write: false,
  input: z.object({}).strict(),
  output: driftBody,
  rest: { method: 'GET', path: '/sync' },
  errors: [503],
  async handler(ctx) {
    const findings = await currentDrift(ctx);
    return { tenant_id: ctx.tenantId, confirm_count: confirmCountOf(findings), findings: findings.map(renderFinding) };
  },
});

export const runSync = defineOperation({
  name: 'sync.run',
  summary: 'Drain the drift report: create and update products, prices, payment links and plans at every provider, in every configured mode',
  scope: 'products:sync',
  write: true,
  input: z.object({ confirm_count: z.number().int().min(0).nullable().optional().describe('the confirm_count of the drift report you read') }).strict(),
  output: syncBody,
  rest: { method: 'POST', path: '/sync' },
  errors: [409, 503],
  responses: {
    202: { description: 'Accepted (Prefer: respond-async): the run passed the gate and goes on; follow it with GET /sync/events?run_id=', schema: accepted },
    409: { description: 'count_mismatch (with the CountMismatch fields) or sync_in_progress', schema: z.union([countMismatch, z.object({ error: z.string(), detail: z.string() })]) },
  },
  async handler(ctx, input) {
    // One workflow does it all: reads the providers, judges drift, checks the count, takes the lock, drains.
    const runId = crypto.randomUUID();
    const handle = await launch(ctx, { tenantId: ctx.tenantId, runId, kind: 'sync', requestedBy: actorRef(ctx.actor), confirmCount: input.confirm_count ?? null });
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
    return { ...result, skipped: result.skipped.map(renderOutcome), failed: result.failed.map(renderOutcome), needs_human: result.needs_human.map(renderFinding) };
  },
});

export const syncProduct = defineOperation({
  name: 'products.sync',
  summary: 'Sync one product to its providers (optionally one provider); 200 with per-provider verdicts even when one failed',
  scope: 'products:sync',
  write: true,
  input: z.object({
    id: id('product id (uuid)'),
    provider: provider.optional().describe('only this provider'),
  }).strict(),
  output: productSyncBody,
  rest: { method: 'POST', path: '/products/{id}/sync', query: ['provider'], noBody: true },
  errors: [404, 409],
  async handler(ctx, input) {
    const product = isUuid(input.id) ? await ctx.tx((trx) => productToSync(trx, input.id)) : undefined;
    if (!product) throw notFound('product');
    const runId = crypto.randomUUID();
    const handle = await launch(ctx, {
      tenantId: ctx.tenantId,
      runId,
      kind: 'product-sync',
      requestedBy: actorRef(ctx.actor),
      product,
      only: input.provider,
    });
    const r = await outcomeOf(handle);
    return { product_id: product.productId, sku: product.sku, run_id: runId, ok: r.ok && r.skipped.length === 0, synced: r.synced, verdicts: r.verdicts };
  },
});
