import type { Knex } from 'knex';
import { storableText } from '../domain/outbound-limits';

/**
 * What an endpoint's drain reads and writes (activities/outbound-delivery.ts), in the tenant's
 * transaction. A subscriber's deliveries go out in recorded order: only the oldest pending
 * delivery of each order key (its head) may be attempted, and only once it is due.
 */

const MAX_EXCERPT = 1024;
const MAX_REASON = 300;

export interface DrainEndpoint {
  id: string;
  url: string;
  enabled: boolean;
  disabled_reason: string | null;
  /** Deliveries posted side by side (halved after a slow round, grown back after quick ones). */
  drain_width: number;
}

export function endpointToDrain(trx: Knex.Transaction, endpointId: string): Promise<DrainEndpoint | undefined> {
  return trx('webhook_endpoints')
    .where({ id: endpointId })
    .first('id', 'url', 'enabled', 'disabled_reason', 'drain_width');
}

export async function setDrainWidth(trx: Knex.Transaction, endpointId: string, width: number): Promise<void> {
  await trx('webhook_endpoints').where({ id: endpointId }).update({ drain_width: width });
}

export interface DueHead {
  id: string;
  event_id: string;
  attempts: number;
  body: unknown;
  /** When the retry window opened (first attempt or replay), epoch ms; null before the first attempt. */
  window_start_ms: number | null;
  /** Seconds since the event was created, on the database's clock (the event → delivered lag, less the attempt). */
  event_age_s: number;
}

export interface Heads {
  due: DueHead[];
  /** More heads are due than `limit`. */
  more: boolean;
  /** Milliseconds until the earliest head that is not due yet; null when none waits. */
  nextDueInMs: number | null;
}

/** The endpoint's heads that are due, oldest first, `limit` at most; and when the next one will be. */
export async function dueHeads(trx: Knex.Transaction, endpointId: string, limit: number): Promise<Heads> {
  const { rows } = await trx.raw(
    `with heads as (
       select distinct on (e.order_key) d.id, d.event_id, d.attempts, d.seq, d.next_attempt_at, d.window_started_at, e.body, e.created_at as event_created_at
         from outbound_deliveries d join outbound_events e on e.id = d.event_id
        where d.endpoint_id = ? and d.status = 'pending'
        order by e.order_key, d.seq)
     select id, event_id, attempts, body,
            (extract(epoch from window_started_at) * 1000)::float8 as window_start_ms,
            extract(epoch from clock_timestamp() - event_created_at)::float8 as event_age_s,
            next_attempt_at <= now() as due,
            greatest(0, ceil(extract(epoch from next_attempt_at - now()) * 1000))::float8 as wait_ms
       from heads order by next_attempt_at, seq limit ?`,
    [endpointId, limit + 1],
  );
  const due = rows.filter((r: { due: boolean }) => r.due);
  const waiting = rows.find((r: { due: boolean }) => !r.due);
  return {
    due: due.slice(0, limit).map((r: DueHead) => ({
      id: r.id,
      event_id: r.event_id,
      attempts: r.attempts,
      body: r.body,
      window_start_ms: r.window_start_ms,
      event_age_s: r.event_age_s,
    })),
    more: due.length > limit,
    nextDueInMs: waiting ? Number(waiting.wait_ms) : null,
  };
}

export interface AttemptOutcome {
  tenantId: string;
  deliveryId: string;
  attempt: number;
  statusCode: number | null;
  latencyMs: number;
  responseExcerpt: string | null;
  error: string | null;
  /** A 2xx: delivered. */
  succeeded: boolean;
  /** Not delivered and still inside the window: due again then. */
  retryAt?: Date;
  /** Not delivered and given up: `failed` with this reason. */
  giveUp?: string;
  /** Given up because the retry window is over (the endpoint is disabled for it). */
  windowOver?: boolean;
}

/**
 * One attempt's row, and the delivery's state after it: delivered, due again later, or failed.
 * What the receiver answered is stored as text can hold it (storableText: a NUL byte is kept as
 * `\u0000`), so no answer can make the write fail.
 */
export async function recordAttemptOutcome(trx: Knex.Transaction, a: AttemptOutcome): Promise<void> {
  const text = (s: string | null | undefined, max: number) => (s == null ? null : storableText(s, max));
  await trx('outbound_attempts').insert({
    tenant_id: a.tenantId,
    delivery_id: a.deliveryId,
    attempt: a.attempt,
    status_code: a.statusCode,
    latency_ms: Math.round(a.latencyMs),
    response_excerpt: text(a.responseExcerpt, MAX_EXCERPT),
    error: text(a.error, MAX_REASON),
  });
  await settleDelivery(trx, a);
}

/** The delivery's state after an attempt (recordAttemptOutcome), or after one that could not be recorded. */
export async function settleDelivery(trx: Knex.Transaction, a: AttemptOutcome): Promise<void> {
  const text = (s: string | null | undefined) => (s == null ? null : storableText(s, MAX_REASON));
  const after = a.succeeded
    ? { status: 'succeeded', delivered_at: trx.fn.now(), reason: null }
    : a.giveUp !== undefined
      ? { status: 'failed', reason: text(a.giveUp) }
      : { reason: text(a.error), next_attempt_at: a.retryAt };
  await trx('outbound_deliveries')
    .where({ id: a.deliveryId })
    .update({
      attempts: trx.raw('attempts + 1'),
      last_status_code: a.statusCode,
      updated_at: trx.fn.now(),
      window_started_at: trx.raw('coalesce(window_started_at, now())'),
      ...after,
    });
}

/**
 * Deliveries that will not be attempted: `failed`, with the reason. By id (the hand-over was
 * refused for good) or all that wait for an endpoint (it is disabled). Only pending ones: a
 * delivered one stays delivered, a failed one keeps its reason.
 */
export async function failPendingDeliveries(
  trx: Knex.Transaction,
  which: { ids: string[] } | { endpointId: string },
  reason: string,
): Promise<number> {
  const q = trx('outbound_deliveries').where({ status: 'pending' });
  if ('ids' in which) q.whereIn('id', which.ids);
  else q.where({ endpoint_id: which.endpointId });
  return q.update({ status: 'failed', reason: storableText(reason, MAX_REASON), updated_at: trx.fn.now() });
}

/*
 * Drain leases (`outbound_drains`, one row per endpoint whose drain is at work). Any live lease
 * (`lease_until` to come) tells the dispatcher not to wake the drain: it will look again by
 * itself. `posting`: the drain holds one of its tenant's turns (MAX_ACTIVE_DRAINS_PER_TENANT
 * post at once); `waiting_since`: it wants one and waits, parked; neither: it is looking for more
 * work after its last round (lingering), holding no turn.
 */

/** The drain posts, in its tenant's turn, until `ms` from now (it holds the turn already, or takeDrainTurn gave it). */
export async function holdDrainLease(
  trx: Knex.Transaction,
  tenantId: string,
  endpointId: string,
  ms: number,
): Promise<void> {
  await trx.raw(
    `insert into outbound_drains (endpoint_id, tenant_id, lease_until) values (?, ?, now() + (? * interval '1 millisecond'))
     on conflict (endpoint_id) do update set lease_until = excluded.lease_until, posting = true, waiting_since = null`,
    [endpointId, tenantId, ms],
  );
}

/** The drain looks for more work until `ms` from now, holding no turn (the dispatcher need not wake it). */
export async function lookingDrainLease(
  trx: Knex.Transaction,
  tenantId: string,
  endpointId: string,
  ms: number,
): Promise<void> {
  await trx.raw(
    `insert into outbound_drains (endpoint_id, tenant_id, lease_until, posting) values (?, ?, now() + (? * interval '1 millisecond'), false)
     on conflict (endpoint_id) do update set lease_until = excluded.lease_until, posting = false, waiting_since = null`,
    [endpointId, tenantId, ms],
  );
}

export type DrainTurn = { granted: true } | { granted: false; parkMs: number };

/**
 * The tenant's turn to post, for this endpoint's drain: granted (a lease of `leaseMs`, as
 * holdDrainLease) when fewer than `cap` of the tenant's drains post now, counting those that
 * waited longer than this one as if they did (a free turn goes to the longest waiting, so a drain
 * with a long backlog that asks again at once does not keep it from the others). Refused: the
 * drain is parked for `parkMsFor(ahead)` (a lease the dispatcher respects, so it is not woken;
 * its workflow looks again then; further back in line, later), keeping when it began to wait.
 * Counted under a lock per tenant, so two drains asking at once are counted one after the other;
 * across every worker process.
 */
export async function takeDrainTurn(
  trx: Knex.Transaction,
  tenantId: string,
  endpointId: string,
  o: { leaseMs: number; parkMsFor: (ahead: number) => number; cap: number },
): Promise<DrainTurn> {
  await trx.raw(`select pg_advisory_xact_lock(hashtextextended('outbound-drains:' || ?, 0))`, [tenantId]);
  const { rows } = await trx.raw(
    `with mine as (select waiting_since from outbound_drains where endpoint_id = ? and lease_until > now())
     select count(*) filter (where d.posting)::int as posting,
            count(*) filter (where d.waiting_since < coalesce((select waiting_since from mine), 'infinity'))::int as ahead
       from outbound_drains d where d.endpoint_id <> ? and d.lease_until > now()`,
    [endpointId, endpointId],
  );
  const { posting, ahead } = rows[0] as { posting: number; ahead: number };
  if (posting + ahead < o.cap) {
    await holdDrainLease(trx, tenantId, endpointId, o.leaseMs);
    return { granted: true };
  }
  const parkMs = o.parkMsFor(ahead);
  await trx.raw(
    `insert into outbound_drains (endpoint_id, tenant_id, lease_until, posting, waiting_since) values (?, ?, now() + (? * interval '1 millisecond'), false, now())
     on conflict (endpoint_id) do update set lease_until = excluded.lease_until, posting = false,
       waiting_since = case when outbound_drains.lease_until > now() then coalesce(outbound_drains.waiting_since, now()) else now() end`,
    [endpointId, tenantId, parkMs],
  );
  return { granted: false, parkMs };
}

/**
 * The drain gives its tenant's turn away for `ms` (a slow receiver's pause): parked, so the dispatcher does not wake
 * it; waiting from now.
 */
export async function parkDrain(
  trx: Knex.Transaction,
  tenantId: string,
  endpointId: string,
  ms: number,
): Promise<void> {
  await trx.raw(
    `insert into outbound_drains (endpoint_id, tenant_id, lease_until, posting, waiting_since) values (?, ?, now() + (? * interval '1 millisecond'), false, now())
     on conflict (endpoint_id) do update set lease_until = excluded.lease_until, posting = false, waiting_since = now()`,
    [endpointId, tenantId, ms],
  );
}

/** The drain stops looking: from now on a new delivery wakes it. */
export async function releaseDrainLease(trx: Knex.Transaction, endpointId: string): Promise<void> {
  await trx('outbound_drains').where({ endpoint_id: endpointId }).del();
}
