import { z } from 'zod';
import { findKeyForApproval } from '../../db/api-keys';
import { findHeldChange, lockPendingChange, settleHeldChange, type HeldChangeRow } from '../../db/held-changes';
import { signalChangeDecided } from '../../temporal/workflow-starts';
import type { Knex } from 'knex';
import { assistantForApproval } from '../../db/assistant-grants';
import { assistantScopesOf } from '../../domain/roles';
import type { AssistantActor, KeyActor } from '../actor';
import { ApiError, serverMisconfigured } from '../errors';
import { executeOperation, summarize } from '../execute';
import { id } from '../schemas';
import { ACCOUNT, defineOperation, type Operation, type OperationContext, type Surface } from '../types';
import { planOf } from './plan';
import { changeBody, knownChangeId, noSuchChange, serializeChange } from './schema';

const changeInput = z.object({ id: id('the change id') }).strict();

/**
 * Who asked, as they are now, to run the approved write as: the key (still live, its scopes now),
 * or the assistant (its consent live, its person still a member, their role now); undefined when
 * that no longer works.
 */
async function requesterOf(
  trx: Knex.Transaction,
  change: HeldChangeRow,
  tenantId: string,
  userId: string,
): Promise<KeyActor | AssistantActor | undefined> {
  const approvedChange = { changeId: change.id, userId };
  if (change.requested_by_assistant) {
    const a = await assistantForApproval(trx, change.requested_by_assistant);
    if (!a) return undefined;
    return {
      kind: 'assistant',
      tenantId,
      assistantId: a.id,
      clientName: a.client_name,
      userId: a.user_id,
      scopes: assistantScopesOf(a.role, a.person_role),
      holdWrites: a.hold_writes,
      approvedChange,
    };
  }
  const key = change.requested_by_key ? await findKeyForApproval(trx, change.requested_by_key) : undefined;
  if (!key || key.revoked_at || (key.expires_at && new Date(key.expires_at) <= new Date())) return undefined;
  return {
    kind: 'api_key',
    tenantId,
    keyId: key.id,
    keyName: key.name,
    scopes: key.scopes,
    expiresAt: key.expires_at,
    requireApproval: true,
    approvedChange,
  };
}

/** A change already decided (or expired) is not decided again. */
const notPending = (row: HeldChangeRow) =>
  new ApiError(409, 'change_not_pending', `This change is already ${row.status.replace('_', ' ')}; nothing was done.`);

/** The pending change, locked for the caller's transaction; 404 when it is not the tenant's, 409 when decided. */
async function pendingChange(trx: Parameters<Parameters<OperationContext['tx']>[0]>[0], changeId: string) {
  const row = await lockPendingChange(trx, changeId);
  if (row) return row;
  const any = await findHeldChange(trx, changeId);
  if (!any) throw noSuchChange();
  // Its expiry passed and the workflow has not closed it yet: it counts as expired.
  throw notPending(any.status === 'pending_approval' ? { ...any, status: 'expired' } : any);
}

async function tellWorkflow(ctx: OperationContext, changeId: string, status: string) {
  // The row is already final; a workflow that misses this signal finds it so at its expiry.
  await signalChangeDecided(ctx.services.temporal!.client, ctx.tenantId, changeId, status).catch((err) =>
    ctx.log.warn({ err, change_id: changeId }, 'could not signal the change workflow'),
  );
}

/**
 * A person approves a held write (docs/approvals.md, "Approving"). Only a person in the
 * dashboard may (an account operation: no key reaches it, so the key that asked never can). In
 * one transaction holding the change's row: the plan is made again and compared with the one the
 * person read; if what it was planned against moved (the product changed since), it ends `stale`
 * and writes nothing. Otherwise the write runs through the one runner as the key that asked (its
 * scopes now), marked approved, so its audit row names the key and the person; the change ends
 * `applied` with the write's identifying fields, or `stale` with the refusal if the write was
 * refused when it ran. Then its workflow is told.
 */
export function makeApproveChange(heldOperation: (name: string) => Operation | undefined) {
  return defineOperation({
    name: 'changes.approve',
    summary: 'Approve a write that waits for a person: it runs now if what it planned still applies',
    scope: ACCOUNT,
    accountArea: 'approvals',
    write: true,
    input: changeInput,
    output: changeBody,
    errors: [404, 409],
    pages: [{ page: '/changes', gates: ['act'] }],
    async handler(ctx, input) {
      const changeId = knownChangeId(input.id);
      if (ctx.actor.kind !== 'user') throw noSuchChange();
      const userId = ctx.actor.userId;
      if (!ctx.services.temporal) throw serverMisconfigured('TEMPORAL_ADDRESS');
      const row = await ctx.tx(async (trx) => {
        const change = await pendingChange(trx, changeId);
        const settle = async (to: 'applied' | 'stale', outcome: Record<string, unknown>) => {
          await settleHeldChange(trx, change.id, to, { userId, outcome });
          return (await findHeldChange(trx, change.id))!;
        };
        const op = heldOperation(change.operation);
        if (!op)
          return settle('stale', { detail: 'This kind of change can no longer be applied; nothing was written.' });
        const actor = await requesterOf(trx, change, ctx.tenantId, userId);
        if (!actor)
          return settle('stale', {
            detail: change.requested_by_assistant
              ? 'The assistant that asked for it was disconnected, or its person left; nothing was written.'
              : 'The key that asked for it no longer works; nothing was written.',
          });
        const plan = await planOf(trx, op, change.input).catch((err: unknown) => {
          if (err instanceof ApiError && err.status < 500) return undefined; // what it names is gone
          throw err;
        });
        if (!plan || plan.basis !== change.plan.basis)
          return settle('stale', {
            detail: 'What it was planned against has changed since it was asked; nothing was written. Ask again.',
            now: plan?.before ?? null,
          });
        // What was sealed while it waited (a file of purchase tokens) is opened for the write alone.
        const input = op.heldInput ? op.heldInput.open(ctx, change.input) : change.input;
        try {
          const result = await executeOperation(op, actor, input, {
            requestId: ctx.requestId,
            services: ctx.services,
            log: ctx.log,
            surface: change.surface as Surface,
          });
          return settle('applied', { result: summarize(result) ?? {} });
        } catch (err) {
          // A refusal now (a scope the key lost, a rule the data no longer meets) writes nothing: stale, with why.
          if (err instanceof ApiError && err.status < 500)
            return settle('stale', { error: err.code, detail: err.detail ?? err.code });
          throw err;
        }
      });
      await tellWorkflow(ctx, row.id, row.status);
      return serializeChange(row, ctx.services.config.publicDashboardUrl);
    },
  });
}

/** A person rejects a held write: it ends `rejected` and nothing is written. */
export const rejectChange = defineOperation({
  name: 'changes.reject',
  summary: 'Reject a write that waits for a person: nothing is written',
  scope: ACCOUNT,
  accountArea: 'approvals',
  write: true,
  input: changeInput,
  output: changeBody,
  errors: [404, 409],
  async handler(ctx, input) {
    const changeId = knownChangeId(input.id);
    if (ctx.actor.kind !== 'user') throw noSuchChange();
    const userId = ctx.actor.userId;
    const row = await ctx.tx(async (trx) => {
      const change = await pendingChange(trx, changeId);
      await settleHeldChange(trx, change.id, 'rejected', {
        userId,
        outcome: { detail: 'A person rejected it; nothing was written.' },
      });
      return (await findHeldChange(trx, change.id))!;
    });
    if (ctx.services.temporal) await tellWorkflow(ctx, row.id, row.status);
    return serializeChange(row, ctx.services.config.publicDashboardUrl);
  },
});
