import { isDeepStrictEqual } from 'node:util';
import type { Knex } from 'knex';
import { readinessReport } from '../domain/readiness';
import { REPLAY_BATCH, REPLAY_PENDING_CAP } from '../domain/outbound-limits';
import { readReadinessFacts } from './readiness-facts';
import { pageFromSql, rows, type PageRequest, type PageSource, type RowPage } from './paging';
import type { Row } from './row';

/**
 * Outbound events, their deliveries and attempts (tenant tables), in the caller's tenant
 * transaction. Events and deliveries are born in the state change's own transaction
 * (`record_outbound_event`); this file reads them and queues replays (the drain
 * that attempts them is db/outbound-drain.ts).
 */

export function eventPage(src: PageSource, filters: { type?: string }, page: PageRequest): Promise<RowPage> {
  return pageFromSql(
    src,
    { table: 'outbound_events', columns: 'outbound_events.*', from: 'outbound_events', filters },
    page,
    rows,
  );
}

export function outboundDeliveryPage(
  src: PageSource,
  filters: { event_id?: string; endpoint_id?: string; status?: string },
  page: PageRequest,
): Promise<RowPage> {
  return pageFromSql(
    src,
    {
      table: 'outbound_deliveries',
      columns: 'outbound_deliveries.*, outbound_events.type, outbound_events.order_key',
      from: 'outbound_deliveries join outbound_events on outbound_events.id = outbound_deliveries.event_id',
      filters,
    },
    page,
    rows,
  );
}

export async function deliveryExists(trx: Knex.Transaction, id: string): Promise<boolean> {
  return !!(await trx('outbound_deliveries').where({ id }).first('id'));
}

/** The attempts of some deliveries (the dashboard's log), newest first, 20 per delivery at most. */
export async function attemptsOf(trx: Knex.Transaction, deliveryIds: string[]): Promise<Row[]> {
  if (!deliveryIds.length) return [];
  const { rows: found } = await trx.raw(
    `select * from (select a.*, row_number() over (partition by a.delivery_id order by a.created_at desc) as n
       from outbound_attempts a where a.delivery_id = any(?::uuid[])) x where n <= 20 order by created_at desc`,
    [deliveryIds],
  );
  return found;
}

export function attemptPage(src: PageSource, filters: { delivery_id?: string }, page: PageRequest): Promise<RowPage> {
  return pageFromSql(
    src,
    { table: 'outbound_attempts', columns: 'outbound_attempts.*', from: 'outbound_attempts', filters },
    page,
    rows,
  );
}

/** A replay would queue past the tenant's quota (REPLAY_PENDING_CAP waiting deliveries): nothing was queued. */
export class ReplayQuotaExceeded extends Error {
  constructor(readonly waiting: number) {
    super(
      `${waiting} deliveries are waiting already; a replay queues more only while fewer than ${REPLAY_PENDING_CAP} wait`,
    );
    this.name = 'ReplayQuotaExceeded';
  }
}

/**
 * How many deliveries a replay may queue now: REPLAY_PENDING_CAP less the tenant's waiting ones
 * (0 or less: none). Taken under a transaction-scoped lock per tenant, so two replays at once
 * are counted one after the other and together stay under the cap.
 */
async function replayRoom(trx: Knex.Transaction, tenantId: string): Promise<{ room: number; waiting: number }> {
  await trx.raw(`select pg_advisory_xact_lock(hashtextextended('outbound-replay:' || ?, 0))`, [tenantId]);
  // Per endpoint (a handful), on the partial index of waiting deliveries; counted up to the cap only.
  const { rows: found } = await trx.raw(
    `select count(*)::int as n from (select 1 from webhook_endpoints w join outbound_deliveries d on d.endpoint_id = w.id and d.status = 'pending' limit ?) x`,
    [REPLAY_PENDING_CAP],
  );
  const waiting = Number(found[0].n);
  return { room: REPLAY_PENDING_CAP - waiting, waiting };
}

/** Queue deliveries again (same event, same webhook-id): `pending`, and an outbox row each unless one waits already. */
async function requeue(trx: Knex.Transaction, tenantId: string, deliveryIds: string[]): Promise<number> {
  if (!deliveryIds.length) return 0;
  const updated: Row[] = await trx('outbound_deliveries as d')
    .join('webhook_endpoints as w', 'w.id', 'd.endpoint_id')
    .whereIn('d.id', deliveryIds)
    .select('d.id', 'd.endpoint_id', 'w.task_queue');
  // Due now, with a new retry window.
  await trx('outbound_deliveries').whereIn('id', deliveryIds).update({
    status: 'pending',
    reason: null,
    next_attempt_at: trx.fn.now(),
    window_started_at: trx.fn.now(),
    updated_at: trx.fn.now(),
  });
  for (let i = 0; i < updated.length; i += 500) {
    await trx('outbound_outbox')
      .insert(
        updated.slice(i, i + 500).map((r) => ({
          delivery_id: r.id,
          task_queue: r.task_queue,
          handover: JSON.stringify({ tenantId, endpointId: r.endpoint_id, deliveryId: r.id }),
        })),
      )
      .onConflict('delivery_id')
      .ignore();
  }
  return updated.length;
}

/**
 * Replay one event: to one endpoint (a delivery is made if the endpoint never had one), or to
 * every endpoint it was delivered to. Answers how many deliveries were queued; undefined when
 * the event (or the endpoint) is not the tenant's.
 */
export async function replayEvent(
  trx: Knex.Transaction,
  tenantId: string,
  eventId: string,
  endpointId?: string,
): Promise<number | undefined> {
  if (!(await trx('outbound_events').where({ id: eventId }).first('id'))) return undefined;
  if (endpointId) {
    if (!(await trx('webhook_endpoints').where({ id: endpointId }).first('id'))) return undefined;
    await trx('outbound_deliveries')
      .insert({ tenant_id: tenantId, event_id: eventId, endpoint_id: endpointId })
      .onConflict(['event_id', 'endpoint_id'])
      .ignore();
  }
  const q = trx('outbound_deliveries').where({ event_id: eventId });
  if (endpointId) q.where({ endpoint_id: endpointId });
  const ids: string[] = await q.pluck('id');
  // All of the event's deliveries or none (at most one per endpoint, so a few).
  const { room, waiting } = await replayRoom(trx, tenantId);
  if (ids.length > room) throw new ReplayQuotaExceeded(waiting);
  return requeue(trx, tenantId, ids);
}

/**
 * Replay deliveries that failed since `since` (optionally of one endpoint), oldest first:
 * REPLAY_BATCH at most, and no more than the replay quota leaves room for (ReplayQuotaExceeded
 * when it leaves none). `has_more`: call again (once the queued ones are through, if the quota
 * was what stopped it).
 */
export async function replayFailedSince(
  trx: Knex.Transaction,
  tenantId: string,
  since: string,
  endpointId?: string,
): Promise<{ queued: number; has_more: boolean }> {
  const { room, waiting } = await replayRoom(trx, tenantId);
  const take = Math.min(REPLAY_BATCH, room);
  const q = trx('outbound_deliveries')
    .where({ status: 'failed' })
    .where('updated_at', '>=', since)
    .orderBy('created_at')
    .limit(Math.max(take, 0) + 1);
  if (endpointId) q.where({ endpoint_id: endpointId });
  const ids: string[] = await q.pluck('id');
  if (take <= 0) {
    if (ids.length) throw new ReplayQuotaExceeded(waiting);
    return { queued: 0, has_more: false };
  }
  const queued = await requeue(trx, tenantId, ids.slice(0, take));
  return { queued, has_more: ids.length > take };
}

// The snapshot keeps counts and verdicts, which no URL changes (only manual steps name one): so
// any write, wherever it runs, can tell a change without knowing where the dashboard lives.
const VERDICTS_ONLY = { dashboardUrl: '' };

/** What `readiness.changed` compares and carries: the summary and each provider's two verdicts. */
async function readinessSnapshot(trx: Knex.Transaction): Promise<Record<string, unknown>> {
  const report = readinessReport(await readReadinessFacts(trx), VERDICTS_ONLY);
  return {
    summary: report.summary,
    providers: report.providers.map((p) => ({
      provider: p.provider,
      live_ready: p.live_ready,
      test_ready: p.test_ready,
    })),
  };
}

/**
 * Store today's readiness as the base later changes are told against (an endpoint is created: it hears of changes from
 * now on).
 */
export async function baseReadiness(trx: Knex.Transaction, tenantId: string): Promise<void> {
  await trx('tenants')
    .where({ id: tenantId })
    .update({ outbound_readiness: JSON.stringify(await readinessSnapshot(trx)) });
}

/**
 * Readiness is judged on read (domain/readiness.ts); this compares today's judgement with the
 * last one kept for the tenant and records `readiness.changed` when they differ. Only when an
 * endpoint wants the event: otherwise nothing is read. Every write of a readiness fact calls it
 * in its own transaction: connections (api/dashboard/providers-page.ts, and the demo's in
 * seed/demo-providers.ts), the catalogue (db/products.ts, db/sync-writes.ts), a new sandbox
 * entitlement (db/entitlements.ts) and the end of a sync run (activities/sync.ts).
 */
export async function noteReadinessChange(trx: Knex.Transaction, tenantId: string): Promise<boolean> {
  const { rows } = await trx.raw('select outbound_wanted(?, ?) as wanted', [tenantId, 'readiness.changed']);
  if (!rows[0].wanted) return false;
  const current = await readinessSnapshot(trx);
  const row = await trx('tenants').where({ id: tenantId }).first('outbound_readiness');
  const previous = row?.outbound_readiness ?? null;
  // Compared as values: the kept snapshot comes back from jsonb with its keys reordered.
  if (previous && isDeepStrictEqual(previous, current)) return false;
  await trx('tenants')
    .where({ id: tenantId })
    .update({ outbound_readiness: JSON.stringify(current) });
  if (!previous) return false;
  await trx.raw('select record_outbound_event(?, ?, null, ?::jsonb)', [
    tenantId,
    'readiness.changed',
    JSON.stringify({ previous, current }),
  ]);
  return true;
}
