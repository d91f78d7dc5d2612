import type { Knex } from 'knex';
import { pageFromSql, rows, type PageRequest, type PageSource, type RowPage } from './paging';
import type { Mode } from '../domain/providers';
import { PROVISIONAL_AT_RECEIPT_SQL, provisionalBindings, type ProvisionalAtReceipt } from './provisional';

/**
 * Inbound webhook deliveries and their outbox. Receipt and hand-over run outside a tenant
 * transaction, as the login role with the narrow grants of the schema: a delivery is routed
 * to its tenant by the verified connection before any tenant transaction exists, and the outbox
 * is the process's own queue, not a tenant table.
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
  /** Provisional access this event grants or stops (db/provisional.ts); null for every other event. */
  provisional?: ProvisionalAtReceipt | null;
}

/**
 * One statement: the delivery row (one per tenant, provider and event id; a redelivery bumps its
 * counter and changes nothing else) and, for a new event with an effect, its outbox row. A
 * redelivery of one not yet processed is queued again if its row already left the outbox: the
 * workflows ignore what they have seen, and nothing depends on the first hand-over. An event that
 * grants or stops provisional access does so in the same statement, on its first delivery only
 * (db/provisional.ts): the grant is decided before the delivery row is written, so the row is written once, with its
 * `premium_at`; any other event's statement is unchanged.
 */
export async function storeDelivery(
  db: Knex,
  d: DeliveryToStore,
): Promise<{
  inserted: boolean;
  queued: boolean;
  /** Grants made (0 or 1), or for an ending the grants it withdrew. */
  provisional: number;
  /** The grant is the app user's first live one of its product: the premium answer changed (waiters to wake). */
  firstGrant: boolean;
}> {
  const effect = d.handover !== null;
  const provisional = d.provisional ?? null;
  const columns = `tenant_id, provider, event_id, event_type, mode, status, reason, processed_at, payload, buyer_email`;
  const values = `?, ?, ?, ?, ?, ?, ?, ${effect ? 'null' : 'now()'}, ?::jsonb, ?`;
  const valueBindings: Knex.RawBinding[] = [
    d.tenantId,
    d.provider,
    d.eventId,
    d.eventType,
    d.mode,
    effect ? 'received' : 'processed',
    d.noEffectReason,
    JSON.stringify(d.payload),
    d.buyerEmail,
  ];
  const upsert = `on conflict (tenant_id, provider, event_id) do update set delivery_count = webhook_deliveries.delivery_count + 1, updated_at = now()
       -- A new row has delivery_count 1 and every redelivery raises it: that tells an insert from a redelivery
       -- without reading xmax, which would need SELECT on the whole table (payload, buyer_email) for the login role.
       returning id, status, (delivery_count = 1) as inserted`;
  const outbox = `o as (insert into webhook_outbox (delivery_id, task_queue, handover) select id, ?, ?::jsonb from d where (inserted or status = 'received') and ?::boolean
           on conflict (delivery_id) do nothing returning id)`;
  const outboxBindings: Knex.RawBinding[] = [d.taskQueue, JSON.stringify(d.handover), effect];
  const statement = provisional
    ? {
        // The event is new unless its row exists: then the function runs before the insert, with the id the row gets
        // (the grant's reference to it is checked at the commit, migration 061). Two first deliveries of one event at
        // once both find it new; the second's insert becomes a redelivery and its grant names a row that never was:
        // the foreign key refuses it at the commit, nothing of it is written, and the statement is run again (below),
        // now as the redelivery it is.
        sql: `with i as (select gen_random_uuid() as id, not exists (select 1 from webhook_deliveries w
                 where w.tenant_id = ? and w.provider = ? and w.event_id = ?) as fresh),
     ${PROVISIONAL_AT_RECEIPT_SQL},
     d as (insert into webhook_deliveries (id, ${columns}, premium_at)
       select i.id, ${values}, case when ?::boolean and (select n from p) > 0 then now() end from i
       ${upsert}),
     ${outbox}
     select d.inserted, (select count(*) from o)::int as queued, (select coalesce(sum(n), 0) from p)::int as provisional from d`,
        bindings: [
          d.tenantId,
          d.provider,
          d.eventId,
          ...provisionalBindings(d.tenantId, d.provider, provisional),
          ...valueBindings,
          !provisional.stop,
          ...outboxBindings,
        ],
      }
    : {
        sql: `with d as (
       insert into webhook_deliveries (${columns})
       values (${values})
       ${upsert}),
     ${outbox}
     select d.inserted, (select count(*) from o)::int as queued from d`,
        bindings: [...valueBindings, ...outboxBindings],
      };
  const run = () => db.raw(statement.sql, statement.bindings).options({ prepare: true });
  const { rows } = await run().catch((err: { code?: string; constraint?: string }) => {
    if (err.code === '23503' && err.constraint === 'provisional_access_delivery_id_fkey') return run();
    throw err;
  });
  // A grant answers 1, or 2 when the same live grant was already held: the answer did not change.
  const n: number = rows[0].provisional ?? 0;
  const grant = provisional !== null && !provisional.stop;
  return {
    inserted: rows[0].inserted,
    queued: rows[0].queued > 0,
    provisional: grant ? Math.min(n, 1) : n,
    firstGrant: grant && n === 1,
  };
}

/**
 * Refused requests kept per provider, tenant (null: no tenant could be named) and kind per minute; past it they are
 * counted nowhere.
 */
export const REFUSALS_KEPT_PER_MINUTE = 20;
const MAX_REASON = 200;

export interface Refusal {
  tenantId: string | null;
  provider: string;
  reason: string;
  bytes: number;
  /**
   * The signature verified (the tenant's own provider sent an event we cannot take): kept as
   * `invalid`, which becomes an `inbound_delivery.failed` event at the tenant's endpoints.
   * Otherwise `unverified`: anyone can send one naming any account, so it is logged for the
   * tenant but pushes nothing.
   */
  verified?: boolean;
}

const windowCount = `select count(*) from webhook_deliveries
   where provider = ? and tenant_id is not distinct from ?::uuid and event_type = ? and created_at > now() - interval '1 minute'`;

/**
 * Keep a refused request as a `failed` delivery under a fresh id (a refused request can never
 * claim a real event id), with our own reason and its size, never the sender's content. An
 * anonymous sender cannot grow the table: at most REFUSALS_KEPT_PER_MINUTE rows a minute per
 * provider, tenant and kind are kept. The cap is one decision per refusal: the insert runs
 * under a transaction-scoped advisory lock of its (provider, tenant, kind), so two receipts
 * cannot both count 19 and both insert. A window already full is answered before the lock (a
 * flood past the cap waits on nothing). Says whether the refusal was kept.
 */
export async function recordRefusal(db: Knex | Knex.Transaction, r: Refusal): Promise<boolean> {
  const eventType = r.verified ? 'invalid' : 'unverified';
  const window = [r.provider, r.tenantId, eventType];
  const full = await db.raw(`select (${windowCount}) >= ? as full`, [...window, REFUSALS_KEPT_PER_MINUTE]);
  if (full.rows[0].full) return false;
  return db.transaction(async (trx) => {
    await trx.raw('select pg_advisory_xact_lock(hashtextextended(?, 0))', [
      `webhook_refusals:${r.provider}:${r.tenantId ?? '-'}:${eventType}`,
    ]);
    // A statement of its own after the lock: its snapshot sees every refusal committed before the lock was granted.
    const { rows } = await trx.raw(
      `insert into webhook_deliveries (tenant_id, provider, event_id, event_type, status, reason, payload)
       select ?::uuid, ?, ? || '_' || gen_random_uuid(), ?, 'failed', ?, ?::jsonb
        where (${windowCount}) < ?
       returning id`,
      [
        r.tenantId,
        r.provider,
        eventType,
        eventType,
        r.reason.slice(0, MAX_REASON),
        JSON.stringify({ bytes: r.bytes }),
        ...window,
        REFUSALS_KEPT_PER_MINUTE,
      ],
    );
    return rows.length > 0;
  });
}

export interface OutboxRow<H> {
  id: string;
  delivery_id: string;
  handover: H;
  attempts: number;
  created_at: Date;
  /** How long ago the row was stored, by the database's clock (the dispatcher lets a customer's events gather). */
  age_ms: number;
}

/**
 * A task queue's rows due now, in the order they fell due (a new row's is its creation), locked so replicas share the
 * work; a row waiting out its back-off holds back no other. The order is the index's (task_queue, next_attempt_at,
 * id): the read stops after `limit` rows whatever the backlog, where ordering by id alone had every due row sorted, or
 * every row in back-off walked past (test/webhooks/receive-path-statements.test.ts).
 */
export async function takeDueOutboxRows<H>(
  trx: Knex.Transaction,
  limit: number,
  taskQueue: string,
): Promise<OutboxRow<H>[]> {
  return trx('webhook_outbox')
    .select('id', 'delivery_id', 'handover', 'attempts', 'created_at')
    .select(trx.raw('(extract(epoch from now() - created_at) * 1000)::float8 as age_ms'))
    .where({ task_queue: taskQueue })
    .where('next_attempt_at', '<=', trx.fn.now())
    .orderBy([{ column: 'next_attempt_at' }, { column: 'id' }])
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .options({ prepare: true });
}

export async function deleteOutboxRows(trx: Knex.Transaction, ids: string[]): Promise<void> {
  // One statement text whatever the count (an array, not a list of placeholders): it runs prepared.
  if (ids.length)
    await trx.raw('delete from webhook_outbox where id = any(?::bigint[])', [ids]).options({ prepare: true });
}

/** Try again after `delayMs`; `counted` says whether this failure spends one of the row's attempts. */
export async function rescheduleOutboxRows(
  trx: Knex.Transaction,
  ids: string[],
  r: { counted: boolean; delayMs: number; error: string },
): Promise<void> {
  if (!ids.length) return;
  await trx('webhook_outbox')
    .whereIn('id', ids)
    .update({
      attempts: trx.raw('attempts + ?', [r.counted ? 1 : 0]),
      next_attempt_at: trx.raw(`now() + (? * interval '1 millisecond')`, [r.delayMs]),
      last_error: r.error.slice(0, MAX_REASON),
    });
}

/**
 * Give up on rows: their deliveries become `failed` with the reason (GET /webhooks?status=failed), the rows leave the
 * outbox.
 */
export async function failOutboxRows(
  trx: Knex.Transaction,
  rows: { id: string; delivery_id: string }[],
  reason: string,
): Promise<void> {
  if (!rows.length) return;
  await trx('webhook_deliveries')
    .whereIn(
      'id',
      rows.map((r) => r.delivery_id),
    )
    .where({ status: 'received' })
    .update({ status: 'failed', reason: reason.slice(0, MAX_REASON), updated_at: trx.fn.now() });
  await deleteOutboxRows(
    trx,
    rows.map((r) => r.id),
  );
}

/** The inbound webhook delivery log as GET /v1/webhooks pages it (payloads are stored redacted). */
export function deliveryPage(
  src: PageSource,
  filters: { provider?: string; status?: string; event_type?: string; mode?: string },
  page: PageRequest,
): Promise<RowPage> {
  return pageFromSql(
    src,
    { table: 'webhook_deliveries', columns: 'webhook_deliveries.*', from: 'webhook_deliveries', filters },
    page,
    rows,
  );
}

/**
 * The end of the webhook pipeline: the activities that applied (or refused) a delivery's events
 * mark its row, in their tenant transaction. Kept apart from `webhook-deliveries.ts`, whose
 * receipt and outbox writes run on the owner connection before any tenant is known.
 */

/** Which deliveries a web lifecycle's batch marks processed, and the subscription each was applied to. */
export interface LifecycleDeliveries {
  eventIds: readonly string[];
  /** By event id: subscriptions already written. */
  subscriptionOf: ReadonlyMap<string, string>;
  /** Events of the subscription the same statement writes (its CTE `s`): they name `s.id`. */
  ofWritten?: readonly string[];
}

/**
 * A web lifecycle applied these events: deliveries still `received` are `processed`, and each names the subscription
 * it was applied to, which is how a customer's timeline finds the provider events it received (db/customers.ts).
 * Answers, for each delivery processed, the seconds since its receipt (the metric
 * `billing_receipt_to_premium_seconds{source="authoritative"}`, observed once the caller commits). `v` is the
 * relation of (event_id, sub) pairs.
 */
const lifecycleDeliveriesUpdate = (v: string) => `update webhook_deliveries d set
       status = case when d.status = 'received' then 'processed' else d.status end,
       processed_at = case when d.status = 'received' then now() else d.processed_at end,
       subscription_id = coalesce(v.sub, d.subscription_id), updated_at = now()
     from ${v}
     where d.provider = ? and d.event_id = v.event_id
       and (d.status = 'received' or d.subscription_id is distinct from coalesce(v.sub, d.subscription_id))
     -- Processed by this transaction (now() is its start): seconds since receipt, on the database's clock.
     returning (d.processed_at = now()) as fresh, extract(epoch from clock_timestamp() - d.created_at)::float8 as lag`;

/** The update on its own, for a batch that wrote no subscription. One statement. */
export async function markLifecycleDeliveriesProcessed(
  trx: Knex.Transaction,
  provider: string,
  eventIds: readonly string[],
  subscriptionOf: ReadonlyMap<string, string> = new Map(),
): Promise<number[]> {
  const ids = [...new Set([...eventIds, ...subscriptionOf.keys()])];
  if (!ids.length) return [];
  const { rows } = await trx.raw(lifecycleDeliveriesUpdate('unnest(?::text[], ?::uuid[]) as v (event_id, sub)'), [
    ids,
    ids.map((e) => subscriptionOf.get(e) ?? null),
    provider,
  ] as Knex.RawBinding[]);
  return (rows as { fresh: boolean | null; lag: number }[]).filter((r) => r.fresh).map((r) => r.lag);
}

/**
 * The update as CTE `d`, folded into the statement that writes a batch's last subscription as its CTE `s`
 * (db/subscriptions.ts `upsertLifecycleSubscription`): one round trip fewer per batch. Select
 * `LIFECYCLE_DELIVERY_LAGS_SQL` from it. Bindings: `lifecycleDeliveriesBindings`.
 */
export const LIFECYCLE_DELIVERIES_CTE = `d as (${lifecycleDeliveriesUpdate(
  `(select u.event_id, case when u.own then s.id else u.sub end as sub
              from s, unnest(?::text[], ?::uuid[], ?::boolean[]) as u (event_id, sub, own)) as v`,
)})`;

/** The fresh lags of `d`, as one array column. */
export const LIFECYCLE_DELIVERY_LAGS_SQL = `(select coalesce(array_agg(lag) filter (where fresh), '{}') from d)`;

export function lifecycleDeliveriesBindings(provider: string, d: LifecycleDeliveries): Knex.RawBinding[] {
  const own = new Set(d.ofWritten ?? []);
  const ids = [...new Set([...d.eventIds, ...d.subscriptionOf.keys(), ...own])];
  return [
    ids,
    ids.map((e) => d.subscriptionOf.get(e) ?? null),
    ids.map((e) => own.has(e)),
    provider,
  ] as Knex.RawBinding[];
}

/**
 * A store notification's purchase was re-read and written: its delivery is `processed`, in the mode the store named.
 */
export async function markStoreDeliveriesProcessed(
  trx: Knex.Transaction,
  provider: string,
  eventIds: readonly string[],
  mode: Mode,
  subscriptionId: string | null = null,
): Promise<void> {
  if (!eventIds.length) return;
  await trx('webhook_deliveries')
    .where({ provider })
    .whereIn('event_id', eventIds)
    .whereNot({ status: 'failed' })
    .update({
      status: 'processed',
      mode,
      processed_at: trx.fn.now(),
      updated_at: trx.fn.now(),
      // The purchase it was about: the customer's timeline lists it (db/customers.ts).
      ...(subscriptionId ? { subscription_id: subscriptionId } : {}),
    });
}

/** The store did not confirm the purchase a notification named: its delivery is `failed`, with the store's reason. */
export async function failDeliveries(
  trx: Knex.Transaction,
  provider: string,
  eventIds: readonly string[],
  reason: string,
): Promise<void> {
  await trx('webhook_deliveries')
    .where({ provider })
    .whereIn('event_id', eventIds)
    .where({ status: 'received' })
    .update({ status: 'failed', reason, updated_at: trx.fn.now() });
}
