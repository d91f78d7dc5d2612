import { z } from 'zod';
import { listConnectionsSafe, type SafeConnection } from '../../db/connections';
import { createImport, finishImport, insertImportItems, type ImportItem } from '../../db/imports';
import type { Tx } from '../../db/transaction';
import { isStoreProvider, PROVIDERS, type Mode, type ProviderId, type WebProviderId } from '../../domain/providers';
import { sealPurchase } from '../../providers/purchase-ref';
import { startImportRun } from '../../temporal/workflow-starts';
import type { ImportRunInput } from '../../workflows/import-run';
import { ApiError, invalidRequest, serverMisconfigured } from '../errors';
import { defineOperation, type OperationContext } from '../types';
import { parseImportFile, type ParsedFile } from './file';
import { importAccepted } from './schema';

/** The connection an import reads through: the provider's default one, which must have proven its account. */
async function provenConnection(trx: Tx, provider: ProviderId): Promise<SafeConnection> {
  const all = (await listConnectionsSafe(trx, { provider })).filter((c) => c.is_active);
  const c = all.find((x) => x.is_default) ?? all[0];
  if (!c)
    throw new ApiError(409, 'provider_not_connected', `No ${provider} connection: connect the provider first.`, {
      param: 'provider',
    });
  if (!c.verified_at)
    throw new ApiError(
      409,
      'connection_not_proven',
      `The ${provider} connection has not proven it owns its account yet (Providers, Verify); an import reads only a proven account.`,
      { param: 'provider' },
    );
  return c;
}

const input = z
  .object({
    provider: z.enum(PROVIDERS).optional().describe('psp_a, psp_b, psp_c: their list API; store_*: with csv'),
    csv: z
      .string()
      .optional()
      .describe(
        'store_android: header purchase_token,app_user_id; store_ios: original_transaction_id,app_user_id; with format revenuecat: a RevenueCat transactions export',
      ),
    format: z.literal('revenuecat').optional().describe('the csv is a RevenueCat transactions export'),
  })
  .strict();

/** What to run, from the request: checked whole before anything is written. */
function planOf(
  body: z.infer<typeof input>,
):
  | { kind: 'provider_api'; provider: WebProviderId }
  | { kind: 'file'; format: 'store_android' | 'store_ios' | 'revenuecat'; file: ParsedFile } {
  if (body.format === 'revenuecat') {
    if (body.provider)
      throw invalidRequest(
        'A RevenueCat export names its stores itself: give format or provider, not both.',
        'provider',
      );
    if (body.csv === undefined) throw invalidRequest('A RevenueCat import needs the export as csv.', 'csv');
    return { kind: 'file', format: 'revenuecat', file: parseImportFile(body.csv, 'revenuecat') };
  }
  if (!body.provider) throw invalidRequest('Name the provider to import from (or format revenuecat).', 'provider');
  if (isStoreProvider(body.provider)) {
    if (body.csv === undefined)
      throw invalidRequest('The stores have no list API: give the purchases to import as csv.', 'csv');
    return { kind: 'file', format: body.provider, file: parseImportFile(body.csv, body.provider) };
  }
  if (body.csv !== undefined)
    throw invalidRequest(`${body.provider} is imported from its own list API: send no csv.`, 'csv');
  return { kind: 'provider_api', provider: body.provider };
}

export const createImportOp = defineOperation({
  name: 'imports.create',
  summary: "Bring a provider's existing subscribers in: a web provider's list API, or a file of store purchases",
  scope: 'imports:write',
  write: true,
  input,
  output: importAccepted,
  rest: { method: 'POST', path: '/imports' },
  fuzzModelled: false,
  errors: [409, 503],
  responses: {
    202: { description: 'Accepted: the import runs; follow it with GET /imports/{id}', schema: importAccepted },
  },
  pages: [{ page: '/imports', gates: ['act'] }],
  tool: {
    name: 'billing_import',
    title: 'Import',
    description:
      "Bring a provider's existing subscribers in: provider psp_a|psp_b|psp_c reads its list API; store_android|store_ios take csv (purchase_token,app_user_id | original_transaction_id,app_user_id); format revenuecat takes a RevenueCat transactions export. Follow it with billing_import_status.",
    // Reads the provider's or store's API; writes subscriptions and entitlements here only; a re-run changes nothing.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  },
  async handler(ctx, body) {
    const plan = planOf(body);
    if (!ctx.services.temporal) throw serverMisconfigured('TEMPORAL_ADDRESS');
    const run = await ctx.tx(async (trx) => prepare(ctx, trx, plan));
    try {
      await startImportRun(ctx.services.temporal.client, ctx.services.config.taskQueue, run);
    } catch (err) {
      await ctx.tx((trx) =>
        finishImport(trx, run.importId, 'failed', 'The import could not be started; import again.'),
      );
      throw err;
    }
    ctx.response.status = 202;
    return { id: run.importId, status: 'running' as const };
  },
});

/** The import's row and its file's lines, in the request's transaction; the workflow's input (ids only). */
async function prepare(ctx: OperationContext, trx: Tx, plan: ReturnType<typeof planOf>): Promise<ImportRunInput> {
  if (plan.kind === 'provider_api') {
    const c = await provenConnection(trx, plan.provider);
    const modes: Mode[] = [
      ...(c.has_live_credential ? ['live' as const] : []),
      ...(c.has_test_credential ? ['test' as const] : []),
    ];
    const row = await createImport(trx, { tenantId: ctx.tenantId, provider: plan.provider, source: 'provider_api' });
    return {
      tenantId: ctx.tenantId,
      importId: row.id,
      source: 'provider_api',
      provider: plan.provider,
      connections: { [plan.provider]: c.id },
      modes,
    };
  }
  const providers = [...new Set(plan.file.rows.map((r) => r.provider))];
  if (plan.format !== 'revenuecat' && !providers.includes(plan.format)) providers.push(plan.format);
  const connections: Partial<Record<ProviderId, string>> = {};
  for (const p of providers) connections[p] = (await provenConnection(trx, p)).id;
  const row = await createImport(trx, {
    tenantId: ctx.tenantId,
    provider: plan.format === 'revenuecat' ? null : plan.format,
    source: plan.format === 'revenuecat' ? 'revenuecat' : 'file',
  });
  const items: ImportItem[] = [
    ...plan.file.rows.map((r) => {
      // A Play token is a bearer credential for the purchase: stored sealed, keyed by its hash.
      const ref = sealPurchase(ctx.services.vault, ctx.tenantId, r.provider, r.ref);
      return {
        line: r.line,
        provider: r.provider,
        ref: ref.key,
        sealed: ref.sealed ?? null,
        app_user_id: r.app_user_id,
      };
    }),
    ...plan.file.refused.map((r) => ({
      line: r.line,
      provider: plan.format === 'revenuecat' ? ('store_ios' as const) : plan.format,
      ref: '',
      outcome: 'refused' as const,
      reason: r.reason,
    })),
  ];
  await insertImportItems(trx, ctx.tenantId, row.id, items);
  return { tenantId: ctx.tenantId, importId: row.id, source: 'file', connections };
}
