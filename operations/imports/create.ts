import crypto from 'node:crypto';
import { z } from 'zod';
import { listConnectionsSafe, type SafeConnection } from '../../db/connections';
import { createImport, finishImport, takeImportCreation } from '../../db/imports';
import type { Tx } from '../../db/transaction';
import { heldFieldAad, sealedField } from '../../domain/changes';
import { importFileAad } from '../../domain/import-file';
import {
  isStoreProvider,
  PROVIDERS,
  type Mode,
  type ProviderId,
  type StoreProviderId,
  type WebProviderId,
} from '../../domain/providers';
import { startImportRun } from '../../temporal/workflow-starts';
import type { ImportRunInput } from '../../workflows/import-run';
import { ApiError, invalidRequest, serverMisconfigured } from '../errors';
import { defineOperation, type OperationContext } from '../types';
import { checkImportBounds, checkImportHeader } from './file';
import { importAccepted } from './schema';

/** One running import per tenant and provider; one import being created per tenant (docs/limits.md). */
const importRunning = (detail: string) => new ApiError(409, 'import_running', detail, { param: 'provider' });

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

/**
 * What to run, from the request's shape and the file's first line alone (the rest of the file is looked at
 * once the connection is known to be proven): a malformed request is refused before anything else.
 */
function planOf(
  body: z.infer<typeof input>,
):
  | { kind: 'provider_api'; provider: WebProviderId }
  | { kind: 'file'; format: StoreProviderId | 'revenuecat'; csv: string } {
  if (body.format === 'revenuecat') {
    if (body.provider)
      throw invalidRequest(
        'A RevenueCat export names its stores itself: give format or provider, not both.',
        'provider',
      );
    if (body.csv === undefined) throw invalidRequest('A RevenueCat import needs the export as csv.', 'csv');
    checkImportHeader(body.csv, 'revenuecat');
    return { kind: 'file', format: 'revenuecat', csv: body.csv };
  }
  if (!body.provider) throw invalidRequest('Name the provider to import from (or format revenuecat).', 'provider');
  if (isStoreProvider(body.provider)) {
    if (body.csv === undefined)
      throw invalidRequest('The stores have no list API: give the purchases to import as csv.', 'csv');
    checkImportHeader(body.csv, body.provider);
    return { kind: 'file', format: body.provider, csv: body.csv };
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
  // A held file (a key that requires approval) waits sealed, as an import keeps its Play tokens: the
  // change's input, the Changes page and GET /v1/changes/{id} show how many lines it has, never them.
  heldInput: {
    seal(ctx, held) {
      if (typeof held.csv !== 'string') return held;
      const lines = held.csv.split(/\r?\n/).filter((l) => l.trim() !== '').length;
      return {
        ...held,
        csv: `${lines} line${lines === 1 ? '' : 's'} (the header included), sealed until a person approves`,
        [sealedField('csv')]: ctx.services.vault.encrypt(held.csv, heldFieldAad(ctx.tenantId, 'csv')),
      };
    },
    open(ctx, held) {
      const sealed = held[sealedField('csv')];
      if (typeof sealed !== 'string') return held;
      const { [sealedField('csv')]: _sealed, ...rest } = held;
      return { ...rest, csv: ctx.services.vault.decrypt(sealed, heldFieldAad(ctx.tenantId, 'csv')) };
    },
  },
  async handler(ctx, body) {
    const plan = planOf(body);
    if (!ctx.services.temporal) throw serverMisconfigured('TEMPORAL_ADDRESS');
    const run = await ctx.tx(async (trx) => {
      if (!(await takeImportCreation(trx, ctx.tenantId)))
        throw importRunning('Another import of this tenant is being created right now; try again in a moment.');
      return prepare(ctx, trx, plan);
    });
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

const running = (provider: string) =>
  importRunning(`An import of ${provider} is running already; wait for it to finish (GET /v1/imports).`);

/**
 * The import's row, in the request's transaction, and the workflow's input (ids only). Of a file
 * only its first line is read before the connection is known to be proven (planOf): nothing more
 * is read of a file it could not import. The file is then checked against its bounds in one pass and
 * stored sealed, whole: its lines are read by the import's activity.
 */
async function prepare(ctx: OperationContext, trx: Tx, plan: ReturnType<typeof planOf>): Promise<ImportRunInput> {
  if (plan.kind === 'provider_api') {
    const c = await provenConnection(trx, plan.provider);
    const modes: Mode[] = [
      ...(c.has_live_credential ? ['live' as const] : []),
      ...(c.has_test_credential ? ['test' as const] : []),
    ];
    const row = await createImport(trx, { tenantId: ctx.tenantId, provider: plan.provider, source: 'provider_api' });
    if (!row) throw running(plan.provider);
    return {
      tenantId: ctx.tenantId,
      importId: row.id,
      source: 'provider_api',
      provider: plan.provider,
      connections: { [plan.provider]: c.id },
      modes,
    };
  }
  // A RevenueCat export's purchases are looked up at the App Store (its other lines are refused by line).
  const store: StoreProviderId = plan.format === 'revenuecat' ? 'store_ios' : plan.format;
  const connection = await provenConnection(trx, store);
  checkImportBounds(plan.csv);
  const id = crypto.randomUUID();
  const row = await createImport(trx, {
    id,
    tenantId: ctx.tenantId,
    provider: plan.format === 'revenuecat' ? null : plan.format,
    source: plan.format === 'revenuecat' ? 'revenuecat' : 'file',
    // Play purchase tokens are bearer credentials: the file is kept sealed until its lines are read.
    fileSealed: ctx.services.vault.encrypt(plan.csv, importFileAad(ctx.tenantId, id)),
  });
  if (!row) throw running(plan.format);
  return { tenantId: ctx.tenantId, importId: row.id, source: 'file', connections: { [store]: connection.id } };
}
