import type { Knex } from 'knex';

/**
 * Inbound webhook deliveries and their outbox. Receipt and hand-over run on the owner
 * connection: a delivery is routed to its tenant by the verified connection before any tenant
 * transaction exists, and the outbox is the process's own queue, not a tenant table.
 */

export interface DeliveryToStore {
  tenantId: string;
  provider: string;
  eventId: string;
  eventType: string;
  mode: string | null;
  /** Already redacted. */
  payload: unknown;
  /** Kept on the row, never handed to a workflow (the write reads it back by event id). */
  buyerEmail: string | null;
  /** What processing needs, or null for an event with no effect (stored as processed at once). */
  handover: unknown | null;
  /** The task queue whose api processes dispatch the hand-over. */
  taskQueue: string;
  noEffectReason: string | null;
}

/**
 * One statement: the delivery row (one per tenant, provider and event id; a redelivery bumps its
 * counter and changes nothing else) and, for a new event with an effect, its outbox row. A
 * redelivery of one not yet processed is queued again if its row already left the outbox: the
 * workflows ignore what they have seen, and nothing depends on the first hand-over.
 */
export async function storeDelivery(db: Knex, d: DeliveryToStore): Promise<{ inserted: boolean; queued: boolean }> {
  const effect = d.handover !== null;
  const { rows } = await db.raw(
    `with d as (
       insert into webhook_deliveries (tenant_id, provider, event_id, event_type, mode, status, reason, processed_at, payload, buyer_email)
       values (?, ?, ?, ?, ?, ?, ?, ${effect ? 'null' : 'now()'}, ?::jsonb, ?)
       on conflict (tenant_id, provider, event_id) do update set delivery_count = webhook_deliveries.delivery_count + 1, updated_at = now()
       returning id, status, (xmax = 0) as inserted),
     o as (insert into webhook_outbox (delivery_id, task_queue, handover) select id, ?, ?::jsonb from d where (inserted or status = 'received') and ?::boolean
           on conflict (delivery_id) do nothing returning id)
     select d.inserted, (select count(*) from o)::int as queued from d`,
    [
      d.tenantId, d.provider, d.eventId, d.eventType, d.mode, effect ? 'received' : 'processed', d.noEffectReason,
      JSON.stringify(d.payload), d.buyerEmail, d.taskQueue, JSON.stringify(d.handover), effect,
    ],
  );
  return { inserted: rows[0].inserted, queued: rows[0].queued > 0 };
}

/** Refused requests kept per provider and tenant (null: no tenant could be named) per minute; past it they are counted nowhere. */
export const REFUSALS_KEPT_PER_MINUTE = 20;
const MAX_REASON = 200;

/**
 * Keep a refused request as a `failed` delivery under a fresh id (an unverified request can never
 * claim a real event id), with our own reason and its size, never the sender's content. An
 * anonymous sender cannot grow the table: at most REFUSALS_KEPT_PER_MINUTE rows a minute per
 * provider and tenant are kept.
 */
export async function recordRefusal(db: Knex, r: { tenantId: string | null; provider: string; reason: string; bytes: number }): Promise<void> {
  await db.raw(
    `insert into webhook_deliveries (tenant_id, provider, event_id, event_type, status, reason, payload)
     select ?::uuid, ?, 'unverified_' || gen_random_uuid(), 'unverified', 'failed', ?, ?::jsonb
      where (select count(*) from webhook_deliveries
              where provider = ? and tenant_id is not distinct from ?::uuid and event_type = 'unverified'
                and created_at > now() - interval '1 minute') < ?`,
    [r.tenantId, r.provider, r.reason.slice(0, MAX_REASON), JSON.stringify({ bytes: r.bytes }), r.provider, r.tenantId, REFUSALS_KEPT_PER_MINUTE],
  );
}

export interface OutboxRow<H> {
  id: string;
  delivery_id: string;
  handover: H;
  attempts: number;
}

/** A task queue's rows due now, oldest first, locked so replicas share the work; a row waiting out its back-off holds back no other. */
export async function takeDueOutboxRows<H>(trx: Knex.Transaction, limit: number, taskQueue: string): Promise<OutboxRow<H>[]> {
  return trx('webhook_outbox').select('id', 'delivery_id', 'handover', 'attempts').where({ task_queue: taskQueue }).where('next_attempt_at', '<=', trx.fn.now())
    .orderBy('id').limit(limit).forUpdate().skipLocked();
}

export async function deleteOutboxRows(trx: Knex.Transaction, ids: string[]): Promise<void> {
  if (ids.length) await trx('webhook_outbox').whereIn('id', ids).del();
}

/** Try again after `delayMs`; `counted` says whether this failure spends one of the row's attempts. */
export async function rescheduleOutboxRows(trx: Knex.Transaction, ids: string[], r: { counted: boolean; delayMs: number; error: string }): Promise<void> {
  if (!ids.length) return;
  await trx('webhook_outbox').whereIn('id', ids).update({
    attempts: trx.raw('attempts + ?', [r.counted ? 1 : 0]),
    next_attempt_at: trx.raw(`now() + (? * interval '1 millisecond')`, [r.delayMs]),
    last_error: r.error.slice(0, MAX_REASON),
  });
}

/** Give up on rows: their deliveries become `failed` with the reason (GET /webhooks?status=failed), the rows leave the outbox. */
export async function failOutboxRows(trx: Knex.Transaction, rows: { id: string; delivery_id: string }[], reason: string): Promise<void> {
  if (!rows.length) return;
  await trx('webhook_deliveries').whereIn('id', rows.map((r) => r.delivery_id)).where({ status: 'received' })
    .update({ status: 'failed', reason: reason.slice(0, MAX_REASON), updated_at: trx.fn.now() });
  await deleteOutboxRows(trx, rows.map((r) => r.id));
}
