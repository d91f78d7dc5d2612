import crypto from 'node:crypto';
import { z } from 'zod';
import type { Knex } from 'knex';
import type { SafeConnection } from '../../db/connections';
import { noteReadinessChange } from '../../db/outbound-events';
import { startConnectionProof } from '../../temporal/workflow-starts';
import { connectionFacts } from './schema';
import type { OperationContext } from '../types';

/**
 * What the account operations on provider connections share (dashboard only: they take
 * credentials). A connection is shown with presence flags, never a secret.
 */
export const connectionView = connectionFacts.extend({
  id: z.string(),
  account_ref: z.string(),
  created_at: z.date(),
  verified_at: z.date().nullable(),
  verified_by: z.enum(['oauth', 'provider_call', 'control_api', 'pasted_key']).nullable(),
  proof_checked_at: z.date().nullable(),
  proof_error: z.string().nullable(),
});

/**
 * A connection write in the tenant's transaction. Every one (credentials, webhook secret,
 * default) changes a readiness fact, told to the tenant's endpoints in the same transaction.
 */
export function writeConnection<T>(ctx: OperationContext, write: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  return ctx.tx(async (trx) => {
    const written = await write(trx);
    await noteReadinessChange(trx, ctx.tenantId);
    return written;
  });
}

/**
 * Start the proof (the probe workflow, run by the worker, records it on the connection). Null
 * when this process has no Temporal client, or the start failed: the connection stays
 * unverified and the Verify button tries again.
 */
export async function startProof(ctx: OperationContext, connection: SafeConnection) {
  const { temporal, config } = ctx.services;
  if (!temporal) return null;
  try {
    return await startConnectionProof(
      temporal.client,
      config.taskQueue,
      ctx.tenantId,
      connection.id,
      crypto.randomUUID(),
    );
  } catch (err) {
    ctx.log.warn({ connection_id: connection.id, err: (err as Error).message }, 'connection proof not started');
    return null;
  }
}
