import crypto from 'node:crypto';
import { z } from 'zod';
import { driftDbFacts, providerSetupFacts } from '../../db/sync-facts';
import { DRIFT_KINDS, driftFindings, subjectOf, type DriftFinding } from '../../domain/drift';
import { confirmCountOf, driftIncomplete, syncTargets, unreadTargets } from '../../domain/sync-plan';
import { readDriftSnapshots } from '../../temporal/workflow-starts';
import { id, provider } from '../schemas';
import { defineOperation, type OperationContext } from '../types';
import { refusalError, temporalOf } from './launch';

export const findingRow = z.object({
  kind: z.enum(DRIFT_KINDS),
  subject: z.string().describe('provider:<provider> or product:<sku>'),
  provider: provider.nullable(),
  mode: z.enum(['live', 'test']).nullable(),
  automatable: z.boolean().describe('a sync can close it; false means it goes to needs_human'),
  detail: z.string(),
});
export const driftBody = z.object({
  tenant_id: id(),
  confirm_count: z.number().int().describe('echo it in POST /sync'),
  findings: z.array(findingRow),
});

// ── Rendering: structured findings and outcomes become the API's rows (subject strings) here only.
export const renderFinding = (f: DriftFinding) => ({
  kind: f.kind,
  subject: subjectOf(f),
  provider: f.provider,
  mode: f.mode,
  automatable: f.automatable,
  detail: f.detail,
});

/** The drift report as of now (GET /v1/sync): every provider read, or 503 naming those that could not be. */
export async function currentDrift(ctx: OperationContext): Promise<DriftFinding[]> {
  const setups = await ctx.tx((trx) => providerSetupFacts(trx));
  const targets = syncTargets(setups);
  const outcomes = targets.length
    ? await readDriftSnapshots(
        temporalOf(ctx),
        ctx.services.config.taskQueue,
        ctx.tenantId,
        crypto.randomUUID(),
        targets,
      )
    : [];
  const incomplete = driftIncomplete(unreadTargets(outcomes));
  if (incomplete) throw refusalError(incomplete);
  const snapshots = new Map(outcomes.map((o) => [`${o.target.provider}:${o.target.mode}`, o.snapshot!]));
  return driftFindings(await ctx.tx((trx) => driftDbFacts(trx, setups, snapshots)));
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
  pages: [{ page: '/sync-runs', gates: ['open'] }],
  tool: {
    name: 'billing_sync_report',
    title: 'Sync Report',
    description: 'Drift report. Read confirm_count here and pass it to billing_sync_run.',
    // Reads every connected provider's current objects to compare them with the catalogue
    // (and answers 503 when one does not answer): read-only, but not a closed world.
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  },
  async handler(ctx) {
    const findings = await currentDrift(ctx);
    return { tenant_id: ctx.tenantId, confirm_count: confirmCountOf(findings), findings: findings.map(renderFinding) };
  },
});
