import { insertHeldChange, settleHeldChange } from '../db/held-changes';
import { DEFAULT_APPROVAL_EXPIRY_SECONDS } from '../domain/changes';
import { startChangeApproval } from '../temporal/workflow-starts';
import type { AssistantActor, KeyActor } from './actor';
import { serverMisconfigured } from './errors';
import type { Operation, OperationContext, Surface } from './types';
import { planOf } from './changes/plan';
import { serializeChange } from './changes/schema';

/**
 * A write held for a person (operations/disposition.ts said `hold`): validated and admitted like
 * any other, then recorded with its plan instead of run, and its workflow started, which waits
 * for a decision or the expiry. Answers at once: 202 on REST, and the tool server explains it.
 */
export async function holdWrite(
  ctx: OperationContext,
  op: Operation,
  actor: KeyActor | AssistantActor,
  input: Record<string, unknown>,
  surface: Surface,
) {
  const temporal = ctx.services.temporal;
  if (!temporal) throw serverMisconfigured('TEMPORAL_ADDRESS');
  const expiresInSeconds = ctx.services.config.approvalExpirySeconds ?? DEFAULT_APPROVAL_EXPIRY_SECONDS;
  const row = await ctx.tx(async (trx) =>
    insertHeldChange(trx, {
      tenantId: ctx.tenantId,
      operation: op.name,
      input: op.heldInput ? op.heldInput.seal(ctx, input) : input,
      requestedBy: actor.kind === 'api_key' ? { keyId: actor.keyId } : { assistantId: actor.assistantId },
      surface,
      plan: await planOf(trx, op, input),
      expiresAt: new Date(Date.now() + expiresInSeconds * 1000),
    }),
  );
  try {
    await startChangeApproval(temporal.client, ctx.services.config.taskQueue, {
      tenantId: ctx.tenantId,
      changeId: row.id,
      expiresInSeconds,
    });
  } catch (err) {
    // Without its workflow nobody would close it: it ends here, having written nothing.
    await ctx.tx((trx) =>
      settleHeldChange(trx, row.id, 'expired', { outcome: { detail: 'Could not be queued for approval.' } }),
    );
    throw err;
  }
  ctx.response.status = 202;
  ctx.response.headers.Location = `/v1/changes/${row.id}`;
  return serializeChange(row, ctx.services.config.publicDashboardUrl);
}
