import type { Knex } from 'knex';

/**
 * The outbound outbox: one row per delivery waiting to be handed to its Temporal workflow,
 * written with the event or by a replay. The worker's dispatcher
 * (temporal/outbound-dispatcher.ts) takes its own task queue's rows as the login role, before
 * any tenant is known: the tenant rides inside `handover`, with ids only.
 */
export interface OutboundHandover {
  tenantId: string;
  endpointId: string;
  /** Failed with the reason if the hand-over is refused for good; the drain itself reads deliveries from their rows. */
  deliveryId: string;
}

export interface OutboundOutboxRow {
  id: string;
  handover: OutboundHandover;
  attempts: number;
}

/** A queue's due rows, oldest first, locked so replicas share the work. */
export async function takeDueOutboundRows(
  trx: Knex.Transaction,
  limit: number,
  taskQueue: string,
): Promise<OutboundOutboxRow[]> {
  return trx('outbound_outbox')
    .select('id', 'handover', 'attempts')
    .where({ task_queue: taskQueue })
    .where('next_attempt_at', '<=', trx.fn.now())
    .orderBy('id')
    .limit(limit)
    .forUpdate()
    .skipLocked();
}

/**
 * Whether any row of `taskQueue` is due: one index probe outside a transaction, so the sweep's
 * empty looks (ten a second) cost one round trip instead of a transaction's three.
 */
export async function anyDueOutboundRow(db: Knex, taskQueue: string): Promise<boolean> {
  const { rows } = await db.raw(
    'select exists (select 1 from outbound_outbox where task_queue = ? and next_attempt_at <= now()) as due',
    [taskQueue],
  );
  return rows[0].due === true;
}

export async function deleteOutboundRows(trx: Knex.Transaction, ids: string[]): Promise<void> {
  if (ids.length) await trx('outbound_outbox').whereIn('id', ids).del();
}

/** Try again after `delayMs`; `counted` says whether the failure spends one of the row's attempts. */
export async function rescheduleOutboundRows(
  trx: Knex.Transaction,
  ids: string[],
  r: { counted: boolean; delayMs: number; error: string },
): Promise<void> {
  if (!ids.length) return;
  await trx('outbound_outbox')
    .whereIn('id', ids)
    .update({
      attempts: trx.raw('attempts + ?', [r.counted ? 1 : 0]),
      next_attempt_at: trx.raw(`now() + (? * interval '1 millisecond')`, [r.delayMs]),
      last_error: r.error.slice(0, 300),
    });
}

/** Of these endpoints, those whose drain holds a lease now: it will see their new deliveries without a wake-up. */
export async function drainingEndpoints(trx: Knex.Transaction, endpointIds: string[]): Promise<Set<string>> {
  if (!endpointIds.length) return new Set();
  const rows: { endpoint_id: string }[] = await trx('outbound_drains')
    .whereIn('endpoint_id', endpointIds)
    .where('lease_until', '>', trx.fn.now())
    .select('endpoint_id');
  return new Set(rows.map((r) => r.endpoint_id));
}
