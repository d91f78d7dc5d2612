import crypto from 'node:crypto';
import { z } from 'zod';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { driftFindings, DRIFT_KINDS, type DriftFinding } from '../../domain/drift';
import type { ProviderId } from '../../domain/providers';
import { driftDbFacts, missingLinks, providerSetups, targetsOf, type ProviderSetup } from '../../db/sync-facts';
import { readDriftSnapshots, startSyncRun } from '../../temporal/workflow-starts';
import type { ProviderWork, SyncOutcome, SyncRunInput, SyncRunResult } from '../../workflows/sync-run';
import { ApiError, notFound, serverMisconfigured } from '../errors';
import { defineOperation, type OperationContext } from './types';
import { id, provider, UUID_RE } from './schemas';

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

/** The drift report as of now: every provider read, or 503 naming those that could not be. */
async function currentDrift(ctx: OperationContext): Promise<{ findings: DriftFinding[]; setups: Map<ProviderId, ProviderSetup> }> {
  const setups = await ctx.tx((trx) => providerSetups(trx));
  const targets = targetsOf(setups);
  const outcomes = targets.length ? await readDriftSnapshots(temporalOf(ctx), ctx.services.config.taskQueue, ctx.tenantId, crypto.randomUUID(), targets) : [];
  const missing = outcomes.filter((o) => !o.snapshot);
  if (missing.length) {
    const names = missing.map((o) => `${o.target.provider} (${o.target.mode}): ${o.reason}`).join('; ');
    throw new ApiError(503, 'drift_incomplete', `Could not read ${names}. The count is unknown, so nothing is reported or drained; retry when the provider answers.`);
  }
  const snapshots = new Map(outcomes.map((o) => [`${o.target.provider}:${o.target.mode}`, o.snapshot!]));
  const facts = await ctx.tx((trx) => driftDbFacts(trx, setups, snapshots));
  return { findings: driftFindings(facts), setups };
}

const uiLink = (ctx: OperationContext, workflowId: string) =>
  `<${ctx.services.config.temporalUiUrl}/namespaces/${encodeURIComponent(ctx.services.config.temporalNamespace)}/workflows/${encodeURIComponent(workflowId)}>; rel="related"; title="Temporal UI"`;

/** Take the tenant's drain lock (a running sync_runs row): a second concurrent drain is 409. */
async function openRun(ctx: OperationContext, kind: SyncRunInput['kind'], confirmCount: number | null): Promise<string> {
  const runId = crypto.randomUUID();
  try {
    await ctx.tx((trx) => trx('sync_runs').insert({ id: runId, tenant_id: ctx.tenantId, kind, status: 'running', confirm_count: confirmCount, requested_by: ctx.principal.keyId }));
  } catch (e) {
    if ((e as { code?: string }).code === '23505') throw new ApiError(409, 'sync_in_progress', 'A sync for this tenant is running; wait for it (GET /v1/sync/events?run_id=…) and retry.');
    throw e;
  }
  return runId;
}

/** Start the run's workflow; if that fails, release the lock so nothing stays half-open. */
async function launch(ctx: OperationContext, input: SyncRunInput) {
  try {
    return await startSyncRun(temporalOf(ctx), ctx.services.config.taskQueue, input);
  } catch (e) {
    await ctx.tx((trx) => trx('sync_runs').where({ id: input.runId }).del());
    if (e instanceof WorkflowExecutionAlreadyStartedError) throw new ApiError(409, 'sync_in_progress', 'That run is already running.');
    throw e;
  }
}

function skippedProviders(setups: Map<ProviderId, ProviderSetup>, only?: ProviderId): SyncOutcome[] {
  return [...setups.entries()]
    .filter(([p, s]) => s.modes.length === 0 && (!only || p === only))
    .map(([p, s]) => ({
      subject: `provider:${p}`,
      ok: false,
      skipped: true,
      detail: s.connection.is_active ? `${p} holds no credential to sync with; enter one in the dashboard` : `the ${p} connection is inactive`,
    }));
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
  tool: { name: 'billing_sync_report', description: 'Drift report. Read confirm_count here and pass it to billing_sync_run.' },
  async handler(ctx) {
    const { findings } = await currentDrift(ctx);
    return { tenant_id: ctx.tenantId, confirm_count: findings.length, findings };
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
    202: { description: 'Accepted (Prefer: respond-async): the run goes on; follow it with GET /sync/events?run_id=', schema: accepted },
    409: { description: 'count_mismatch (with the CountMismatch fields) or sync_in_progress', schema: z.union([countMismatch, z.object({ error: z.string(), detail: z.string() })]) },
  },
  tool: { name: 'billing_sync_run', description: 'Run the sync drain. Needs confirm_count from billing_sync_report; writes to live providers.', destructive: true },
  async handler(ctx, input) {
    const { findings, setups } = await currentDrift(ctx);
    const received = input.confirm_count ?? null;
    if (received !== findings.length) {
      throw new ApiError(409, 'count_mismatch', `${findings.length} item(s) need attention now; re-read GET /v1/sync and retry with its confirm_count.`, {
        expected: findings.length,
        received,
        requiresConfirmation: true,
      });
    }
    const runId = await openRun(ctx, 'sync', received);
    const activeIds = await ctx.tx((trx) => trx('products').where({ active: true }).orderBy('sku').select('id', 'sku'));
    const skuOf = new Map<string, string>(activeIds.map((p: { id: string; sku: string }) => [p.id, p.sku]));
    const idOf = new Map<string, string>(activeIds.map((p: { id: string; sku: string }) => [p.sku, p.id]));
    const work: ProviderWork[] = [];
    for (const target of targetsOf(setups)) {
      const here = findings.filter((f) => f.provider === target.provider && f.mode === target.mode && f.kind === 'product-missing-at-provider');
      const products = here.filter((f) => f.automatable).map((f) => ({ productId: idOf.get(f.subject.slice('product:'.length))!, sku: f.subject.slice('product:'.length) }));
      const blocked = new Set(here.filter((f) => !f.automatable).map((f) => f.subject));
      const linkable = activeIds.filter((p: { sku: string }) => !blocked.has(`product:${p.sku}`)).map((p: { id: string }) => p.id);
      const links = (await ctx.tx((trx) => missingLinks(trx, target, linkable))).map((l) => ({ ...l, sku: skuOf.get(l.productId)! }));
      if (products.length || links.length) work.push({ target, products, links });
    }
    const run: SyncRunInput = { tenantId: ctx.tenantId, runId, kind: 'sync', work, needsHuman: findings.filter((f) => !f.automatable), skipped: skippedProviders(setups) };
    const handle = await launch(ctx, run);
    ctx.response.headers.Link = uiLink(ctx, handle.workflowId);
    if (ctx.preferAsync) {
      ctx.response.status = 202;
      ctx.response.headers['Preference-Applied'] = 'respond-async';
      return { run_id: runId, status: 'running' as const };
    }
    const { verdicts: _verdicts, ...result } = (await handle.result()) as SyncRunResult;
    return result;
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
  tool: { name: 'billing_sync_product', description: 'Sync one product to its providers (the only onboarding step that writes to a live provider). Read every verdict: a 200 can hold failures.' },
  async handler(ctx, input) {
    const product = UUID_RE.test(input.id) ? await ctx.tx((trx) => trx('products').where({ id: input.id }).first('id', 'sku')) : undefined;
    if (!product) throw notFound('product');
    const setups = await ctx.tx((trx) => providerSetups(trx));
    const runId = await openRun(ctx, 'product-sync', null);
    const work: ProviderWork[] = [];
    for (const target of targetsOf(setups).filter((t) => !input.provider || t.provider === input.provider)) {
      const links = (await ctx.tx((trx) => missingLinks(trx, target, [product.id]))).map((l) => ({ ...l, sku: product.sku }));
      work.push({ target, products: [{ productId: product.id, sku: product.sku }], links });
    }
    const skipped = skippedProviders(setups, input.provider);
    if (input.provider && !setups.has(input.provider)) {
      skipped.push({ subject: `provider:${input.provider}`, ok: false, skipped: true, detail: `${input.provider} is not connected to this account` });
    }
    const handle = await launch(ctx, { tenantId: ctx.tenantId, runId, kind: 'product-sync', work, needsHuman: [], skipped });
    ctx.response.headers.Link = uiLink(ctx, handle.workflowId);
    const r = (await handle.result()) as SyncRunResult;
    return { product_id: product.id, sku: product.sku, run_id: runId, ok: r.ok && r.skipped.length === 0, synced: r.synced, verdicts: r.verdicts };
  },
});

