import { claimProofImport, finishImport } from '../../db/imports';
import { startImportRun } from '../../temporal/workflow-starts';
import type { OperationContext } from '../types';

/**
 * A connection proven by an operation (OAuth connect) brings its account's existing subscribers
 * in, as a proof by the probe workflow does (workflows/probe-providers.ts): the import is made
 * once per connection (db/imports.ts) and started after the connection's transaction committed.
 * Best effort: a connection is never refused for its import; one that could not start is marked
 * failed, with the reason, and the Import button runs it again.
 */
export async function importOnProof(ctx: OperationContext, connectionId: string): Promise<void> {
  const { temporal, config } = ctx.services;
  if (!temporal) return;
  const imp = await ctx.tx((trx) => claimProofImport(trx, ctx.tenantId, connectionId));
  if (!imp) return;
  try {
    await startImportRun(temporal.client, config.taskQueue, {
      tenantId: ctx.tenantId,
      importId: imp.importId,
      source: 'provider_api',
      provider: imp.provider,
      connections: { [imp.provider]: connectionId },
      modes: imp.modes,
    });
  } catch (err) {
    ctx.log.warn({ import_id: imp.importId, err: (err as Error).message }, 'import on proof not started');
    await ctx.tx((trx) => finishImport(trx, imp.importId, 'failed', 'The import could not be started; import again.'));
  }
}
