import { Connection } from '@temporalio/client';
import type { Knex } from 'knex';
import {
  anyDueOutboundRow,
  deleteOutboundRows,
  drainingEndpoints,
  rescheduleOutboundRows,
  takeDueOutboundRows,
  type OutboundOutboxRow,
} from '../db/outbound-outbox';
import { failPendingDeliveries } from '../db/outbound-drain';
import { withTenant } from '../db/tenant-tx';
import type { Config } from '../runtime/config';
import { logger } from '../runtime/logger';
import type { Vault } from '../vault/vault';
import { callWithin, workflowClient } from './client';
import {
  isRefusal,
  MAX_HANDOVER_REFUSALS,
  reasonOf,
  refusalBackoffMs as backoffMs,
  UNAVAILABLE_RETRY_MS,
} from './handover-failure';
import { outboundTaskQueue } from '../domain/outbound-queue';
import { runFairly } from '../domain/outbound-limits';
import { wakeOutboundEndpoint } from './workflow-starts';

const BATCH = 200;
const IN_FLIGHT = 16;
/**
 * Of those, one tenant's at most; tenants take turns, so one with many endpoints to wake goes not before another's
 * first.
 */
const IN_FLIGHT_PER_TENANT = 4;
const HANDOVER_TIMEOUT_MS = 10_000;
/**
 * The sweep: events are rows written by other processes (the inbound path), so the outbox is polled; an empty poll is
 * one index probe, outside any transaction (anyDueOutboundRow).
 */
const SWEEP_MS = 100;
/** Refusals a row may meet before its delivery is `failed` (temporal/handover-failure.ts). */
export const MAX_OUTBOUND_HANDOVER_ATTEMPTS = MAX_HANDOVER_REFUSALS;

export interface OutboundDispatcher {
  stop(): Promise<void>;
}

/**
 * Drains `outbound_outbox` rows of the deployment's task queue (`taskQueue`, as endpoints store
 * it) into Temporal, waking their workflows on the outbound queue, as the webhook outbox's
 * dispatcher does for inbound events: due rows locked with SKIP LOCKED (worker replicas share
 * the work), grouped by tenant and endpoint, one signal-with-start per endpoint (IN_FLIGHT at a
 * time, IN_FLIGHT_PER_TENANT of one tenant, tenants taking turns) that wakes its
 * drain (the deliveries themselves are read from their rows) unless the drain holds its lease
 * (it is looking, and looks once more before it lets go), rows deleted in the same transaction. Temporal away costs no
 * attempt; a
 * refusal is retried with back-off and after MAX_OUTBOUND_HANDOVER_ATTEMPTS the deliveries are
 * `failed` with the reason (the dead-letter state the delivery log shows). Started with the
 * outbound worker (temporal/outbound-worker.ts); `isRunning` ends it when that worker stops.
 */
export function startOutboundDispatcher(o: {
  db: Knex;
  config: Config;
  vault: Vault;
  address: string;
  namespace: string;
  taskQueue: string;
  isRunning: () => boolean;
}): OutboundDispatcher {
  const connection = Connection.lazy({ address: o.address });
  const client = workflowClient(connection, o.namespace, o.vault);
  const policy = {
    attemptTimeoutMs: o.config.outboundWebhooks.attemptTimeoutMs,
    firstRetryMs: o.config.outboundWebhooks.firstRetryMs,
    retryWindowMs: o.config.outboundWebhooks.retryWindowMs,
    drainRetryMs: o.config.outboundWebhooks.drainRetryMs,
  };
  const wakeQueue = outboundTaskQueue(o.taskQueue);
  let stopped = false;
  let running: Promise<void> | null = null;

  const pass = () =>
    o.db.transaction(async (trx) => {
      const rows = await takeDueOutboundRows(trx, BATCH, o.taskQueue);
      const groups = new Map<string, OutboundOutboxRow[]>();
      for (const r of rows) {
        const h = r.handover;
        const key = [h.tenantId, h.endpointId].join('\u0000');
        groups.set(key, [...(groups.get(key) ?? []), r]);
      }
      // A drain that holds its lease looks again before it lets go: no wake-up needed.
      const draining = await drainingEndpoints(trx, [...new Set(rows.map((r) => r.handover.endpointId))]);
      const done: string[] = [];
      const queue: OutboundOutboxRow[][] = [];
      for (const g of groups.values()) {
        if (draining.has(g[0].handover.endpointId)) done.push(...g.map((r) => r.id));
        else queue.push(g);
      }
      const failures: { group: OutboundOutboxRow[]; err: unknown }[] = [];
      await runFairly(
        queue,
        (g) => g[0].handover.tenantId,
        { total: IN_FLIGHT, perKey: IN_FLIGHT_PER_TENANT },
        async (group) => {
          const h = group[0].handover;
          try {
            await callWithin(client, HANDOVER_TIMEOUT_MS, () =>
              wakeOutboundEndpoint(client, wakeQueue, { tenantId: h.tenantId, endpointId: h.endpointId, policy }),
            );
            done.push(...group.map((r) => r.id));
          } catch (err) {
            failures.push({ group, err });
          }
        },
      );
      await deleteOutboundRows(trx, done);
      for (const { group, err } of failures) await settleFailure(o.db, trx, group, err);
      return rows.length === BATCH;
    });

  const run = async () => {
    try {
      // Most sweeps find nothing: a probe first, the locking transaction only when a row is due.
      if (!(await anyDueOutboundRow(o.db, o.taskQueue))) return;
      while (!stopped && (await pass()));
    } catch (err) {
      logger.warn({ err: (err as Error).message }, 'outbound outbox pass failed');
    }
  };
  const sweep = setInterval(() => {
    if (!o.isRunning()) return void stop();
    running ??= run().finally(() => {
      running = null;
    });
  }, SWEEP_MS);
  sweep.unref();
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    clearInterval(sweep);
    await running;
    await connection.close().catch(() => undefined);
  };
  return { stop };
}

async function settleFailure(db: Knex, trx: Knex.Transaction, group: OutboundOutboxRow[], err: unknown): Promise<void> {
  const message = reasonOf(err);
  const ids = group.map((r) => r.id);
  if (!isRefusal(err))
    return rescheduleOutboundRows(trx, ids, { counted: false, delayMs: UNAVAILABLE_RETRY_MS, error: message });
  const attempts = Math.max(...group.map((r) => r.attempts)) + 1;
  if (attempts < MAX_OUTBOUND_HANDOVER_ATTEMPTS)
    return rescheduleOutboundRows(trx, ids, { counted: true, delayMs: backoffMs(attempts), error: message });
  logger.warn({ rows: group.length, attempts }, 'outbound hand-over refused repeatedly; deliveries failed');
  const tenantId = group[0].handover.tenantId;
  await withTenant(db, tenantId, (t) =>
    failPendingDeliveries(
      t,
      { ids: group.map((r) => r.handover.deliveryId) },
      `delivery could not be started after ${attempts} attempts: ${message}`,
    ),
  );
  await deleteOutboundRows(trx, ids);
}
