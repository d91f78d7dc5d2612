import {
  deleteOutboxRows,
  failOutboxRows,
  rescheduleOutboxRows,
  takeDueOutboxRows,
  type OutboxRow,
} from '../../db/webhook-deliveries';
import { logger } from '../../runtime/logger';
import { handoverLatency, handovers } from '../../runtime/metrics';
import { contextFrom, inSpan } from '../../runtime/tracing';
import { callWithin } from '../../temporal/client';
import {
  isRefusal,
  MAX_HANDOVER_REFUSALS,
  reasonOf,
  refusalBackoffMs as backoffMs,
  UNAVAILABLE_RETRY_MS,
} from '../../temporal/handover-failure';
import type { Services } from '../../operations/services';
import { groupKey, handOver, SETTLE_MS, settleWaitMs, type Handover } from './handover';

const BATCH = 200;
// No provider waits on the dispatcher: a slow Temporal is given time rather than timed out, since
// a signal that times out here may still have been recorded, and sending it again is pure load.
const HANDOVER_TIMEOUT_MS = 10_000;
// Signals in flight per pass: enough to keep Temporal busy, few enough not to queue behind each other.
const IN_FLIGHT = 16;
const SWEEP_MS = 1000;
/**
 * Temporal away: the pause before the next pass, doubling from UNAVAILABLE_RETRY_MS up to this. Meanwhile kicks and
 * sweeps start no pass, so the outbox is read once a pause however many receipts arrive, and the backlog is never
 * re-scanned while nothing can be handed over.
 */
export const MAX_UNAVAILABLE_PAUSE_MS = 10_000;
/** Refusals a row may meet before its delivery is `failed` (temporal/handover-failure.ts). */
export const MAX_HANDOVER_ATTEMPTS = MAX_HANDOVER_REFUSALS;

export interface Dispatcher {
  /** Drain soon (the receiver calls this after each commit). */
  kick(): void;
  stop(): Promise<void>;
}

const dispatchers = new WeakMap<Services, Dispatcher>();

/**
 * Start the process's dispatcher: every api process does at boot (api/main.ts), so rows a crash
 * left behind drain without waiting for the next webhook. Idempotent.
 */
export function startDispatcher(services: Services): Dispatcher {
  let d = dispatchers.get(services);
  if (!d) {
    d = createDispatcher(services);
    dispatchers.set(services, d);
  }
  return d;
}

/**
 * Wake the process's dispatcher for a row just stored. It was started at boot; a process that
 * did not start one does not get one here (work starts with the process, not on first use), and
 * its rows wait for a process that did.
 */
export function kickDispatcher(services: Services): void {
  dispatchers.get(services)?.kick();
}

export async function stopDispatcher(services: Services): Promise<void> {
  await dispatchers.get(services)?.stop();
  dispatchers.delete(services);
}

/**
 * Drains `webhook_outbox` into Temporal, for the process's task queue: due rows locked with
 * SKIP LOCKED (replicas share the work and never send a row twice at once), grouped by tenant
 * and customer (or store notification), one Temporal call per group (16 in flight), deleted in
 * the same transaction. A customer's rows are handed over once they have settled (handover.ts,
 * `settleWaitMs`: a checkout's events become one signal); a group still gathering stays in the
 * outbox, unlocked, and the next pass is timed for it. A refused group is retried with back-off
 * and, after MAX_HANDOVER_ATTEMPTS, its deliveries are `failed` with the reason; rows waiting
 * out a back-off never hold back the others. Kicked after every receipt and swept every second.
 * While Temporal is away (a pass's hand-overs fail as unavailable and none goes through) the pass stops at the first
 * such failure, and the next one waits out a pause (2 s doubling to MAX_UNAVAILABLE_PAUSE_MS) that kicks and sweeps do
 * not cut short: an outage costs the outbox one read a pause, not one per receipt (docs/provisional-access.md).
 */
function createDispatcher(services: Services): Dispatcher {
  let running: Promise<void> | null = null;
  let kicked = false;
  let stopped = false;

  /** Set while Temporal is away: no pass before `until`; `pauseMs` doubles with each pass that finds it still away. */
  let away: { until: number; pauseMs: number } | null = null;

  /**
   * One pass: whether a full batch went through (more may be waiting), when the earliest held group settles, and
   * whether Temporal was away (a hand-over failed as unavailable and none went through).
   */
  const pass = async (): Promise<{ more: boolean; settlesInMs: number | null; unavailable: boolean }> => {
    const temporal = services.temporal;
    if (!temporal) return { more: false, settlesInMs: null, unavailable: false };
    return services.db.transaction(async (trx) => {
      const rows = await takeDueOutboxRows<Handover>(trx, BATCH, services.config.taskQueue);
      const groups = new Map<string, OutboxRow<Handover>[]>();
      for (const r of rows) {
        const key = groupKey(r.handover);
        groups.set(key, [...(groups.get(key) ?? []), r]);
      }
      // Groups still gathering are left as they are (their locks end with this transaction).
      let settlesInMs: number | null = null;
      const queue: OutboxRow<Handover>[][] = [];
      for (const g of groups.values()) {
        const wait = settleWaitMs(g);
        if (wait > 0) settlesInMs = Math.min(settlesInMs ?? wait, wait);
        else queue.push(g);
      }
      const ready = queue.reduce((k, g) => k + g.length, 0);
      const client = temporal.client;
      const done: string[] = [];
      const failures: { group: OutboxRow<Handover>[]; err: unknown }[] = [];
      // Once a hand-over finds Temporal away, the groups not yet sent stay as they are (unlocked at the commit, no
      // write): the pass ends within one call's time instead of waiting out every group's.
      let unavailable = false;
      await Promise.all(
        Array.from({ length: Math.min(IN_FLIGHT, queue.length) }, async () => {
          for (
            let group = unavailable ? undefined : queue.shift();
            group;
            group = unavailable ? undefined : queue.shift()
          ) {
            const g = group;
            try {
              // The hand-over continues the trace of the group's first receipt (when tracing is on).
              await inSpan(
                'webhook.handover',
                { 'billing.kind': g[0].handover.kind, 'billing.rows': g.length },
                () =>
                  callWithin(client, HANDOVER_TIMEOUT_MS, () =>
                    handOver(
                      client,
                      services.config.taskQueue,
                      g.map((r) => r.handover),
                    ),
                  ),
                contextFrom(g[0].handover.trace),
              );
              done.push(...g.map((r) => r.id));
              handovers.inc({ outcome: 'ok' });
              const now = Date.now();
              for (const r of g) handoverLatency.observe((now - new Date(r.created_at).getTime()) / 1000);
            } catch (err) {
              failures.push({ group: g, err });
              if (!isRefusal(err)) unavailable = true;
            }
          }
        }),
      );
      await deleteOutboxRows(trx, done);
      for (const { group, err } of failures) await settleFailure(trx, group, err);
      // A full batch whose ready rows all went through: more may be waiting behind it.
      return {
        more: rows.length === BATCH && ready > 0 && done.length === ready,
        settlesInMs,
        unavailable: unavailable && done.length === 0,
      };
    });
  };

  // One timer: the next pass, at the earliest moment anyone asked for.
  let timer: NodeJS.Timeout | null = null;
  let timerAt = Infinity;
  const passIn = (ms: number) => {
    const at = Date.now() + ms;
    if (stopped || (timer && timerAt <= at)) return;
    if (timer) clearTimeout(timer);
    timerAt = at;
    timer = setTimeout(() => {
      timer = null;
      timerAt = Infinity;
      if (stopped) return;
      if (running) {
        kicked = true;
        return;
      }
      running = run().finally(() => {
        running = null;
      });
    }, ms);
  };

  const run = async () => {
    for (;;) {
      kicked = false;
      let r: Awaited<ReturnType<typeof pass>> = { more: false, settlesInMs: null, unavailable: false };
      try {
        r = await pass();
      } catch (err) {
        // Postgres away: the rows are where they were, and the sweep tries again.
        logger.warn({ err: (err as Error).message }, 'webhook outbox pass failed');
      }
      if (stopped) return;
      if (r.unavailable) {
        // Temporal away: one pass after the pause, whatever arrives meanwhile (kicks and sweeps wait for it).
        const pauseMs = away ? Math.min(away.pauseMs * 2, MAX_UNAVAILABLE_PAUSE_MS) : UNAVAILABLE_RETRY_MS;
        if (!away)
          logger.warn({ pauseMs }, 'Temporal unreachable: webhook hand-overs pause (receipts are still stored)');
        away = { until: Date.now() + pauseMs, pauseMs };
        passIn(pauseMs);
        return;
      }
      if (away) {
        away = null;
        logger.info('Temporal reachable again: webhook hand-overs resume');
      }
      if (r.more) continue;
      if (r.settlesInMs !== null) passIn(r.settlesInMs);
      // Rows stored during the pass: the earliest they can have settled.
      if (kicked) passIn(SETTLE_MS);
      return;
    }
  };

  // A receipt's row cannot be handed over before it has settled: the pass is timed for then. While Temporal is away
  // the pass already timed for the end of the pause stands (passIn keeps the earliest), and no other is started.
  const kick = () => {
    if (stopped) return;
    if (away && Date.now() < away.until) return;
    if (running) kicked = true;
    else passIn(SETTLE_MS);
  };

  const sweep = setInterval(kick, SWEEP_MS);
  sweep.unref();
  kick();
  return {
    kick,
    async stop() {
      stopped = true;
      clearInterval(sweep);
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}

async function settleFailure(trx: Parameters<typeof deleteOutboxRows>[0], group: OutboxRow<Handover>[], err: unknown) {
  const message = reasonOf(err);
  if (!isRefusal(err)) {
    handovers.inc({ outcome: 'unavailable' });
    await rescheduleOutboxRows(
      trx,
      group.map((r) => r.id),
      { counted: false, delayMs: UNAVAILABLE_RETRY_MS, error: message },
    );
    return;
  }
  const attempts = Math.max(...group.map((r) => r.attempts)) + 1;
  handovers.inc({ outcome: attempts >= MAX_HANDOVER_ATTEMPTS ? 'failed' : 'refused' });
  if (attempts >= MAX_HANDOVER_ATTEMPTS) {
    logger.warn({ rows: group.length, attempts }, 'webhook hand-over refused repeatedly; deliveries failed');
    await failOutboxRows(trx, group, `processing could not be started after ${attempts} attempts: ${message}`);
  } else {
    await rescheduleOutboxRows(
      trx,
      group.map((r) => r.id),
      { counted: true, delayMs: backoffMs(attempts), error: message },
    );
  }
}
