import { ApplicationFailure, heartbeat, sleep } from '@temporalio/activity';
import type { Knex } from 'knex';
import { withTenant } from '../db/tenant-tx';
import { isDatabaseUnavailable } from '../db/unavailable';
import {
  dueHeads,
  endpointToDrain,
  failPendingDeliveries,
  holdDrainLease,
  lookingDrainLease,
  parkDrain,
  recordAttemptOutcome,
  releaseDrainLease,
  setDrainWidth,
  settleDelivery,
  takeDrainTurn,
  type AttemptOutcome,
  type DueHead,
} from '../db/outbound-drain';
import { signingSecrets, updateEndpoint } from '../db/outbound-endpoints';
import { DRAIN_PARK_MS, fairPace, MAX_ACTIVE_DRAINS_PER_TENANT } from '../domain/outbound-limits';
import { afterFailedAttempt, DRAIN_BUDGET_MS, type OutboundRetryPolicy } from '../domain/outbound-retry';
import { logger } from '../runtime/logger';
import { outboundEventToDelivered } from '../runtime/metrics';
import type { ActivityDeps } from './deps';
import { postSigned } from './outbound-http';

/** Heads attempted side by side in one round at most (one endpoint's receiver sees at most this many at once). */
export const DRAIN_CONCURRENCY = 8;
/** After its last attempt a drain keeps looking this long, every POLL_MS, before it lets go. */
const LINGER_MS = 3_000;
const POLL_MS = 200;
/** How long a lease says "I am looking"; renewed at half-life, so it outlives a poll by far. */
const LEASE_MS = 3_000;
/**
 * A parked drain's lease outlives its park by this much: its workflow looks again in between, still counted as waiting.
 */
const PARK_GRACE_MS = 2_000;
/** A slow receiver's drain pauses at most this long after a slow round. */
const MAX_SLOW_PAUSE_MS = 30_000;
/** Postgres cannot be reached: the drain hands back and runs again after this, costing no try. */
const DATABASE_AWAY_MS = 5_000;

export interface DrainResult {
  /** The endpoint no longer exists: nothing more to do. */
  gone: boolean;
  attempted: number;
  /** Deliveries are due now (the budget ran out first): drain again at once. */
  more: boolean;
  /** Milliseconds until the earliest retry (or until a parked drain looks again); null when nothing waits. */
  nextDueInMs: number | null;
}

/**
 * The back-off for slow receivers: a round in which an attempt took half the attempt timeout or
 * more (a timeout included) halves the endpoint's width, down to one POST at a time; a round
 * without one widens it by one, up to DRAIN_CONCURRENCY.
 */
export function nextDrainWidth(width: number, slow: boolean): number {
  return slow ? Math.max(1, Math.floor(width / 2)) : Math.min(DRAIN_CONCURRENCY, width + 1);
}

/**
 * How long a drain refused its tenant's turn stays parked, lease included: DRAIN_PARK_MS for the
 * first `cap` in line, longer further back (they would only be refused again), 30 s at most.
 */
export function parkMsFor(ahead: number): number {
  return (
    Math.min(MAX_SLOW_PAUSE_MS, DRAIN_PARK_MS * (1 + Math.floor(ahead / MAX_ACTIVE_DRAINS_PER_TENANT))) + PARK_GRACE_MS
  );
}

/**
 * After a slow round the drain gives its tenant's turn away and pauses: longer the narrower the endpoint has become.
 */
export function slowPauseMs(width: number): number {
  return Math.min(MAX_SLOW_PAUSE_MS, DRAIN_PARK_MS * Math.ceil(DRAIN_CONCURRENCY / width));
}

const widthOf = (w: number | null | undefined) => Math.min(DRAIN_CONCURRENCY, Math.max(1, w ?? DRAIN_CONCURRENCY));
const codeOf = (e: unknown) => (e as { code?: string }).code ?? (e as Error).name ?? 'error';

/**
 * The side of outbound webhooks that touches the network: one endpoint's drain. Rounds of due
 * heads (the oldest pending delivery of each subscriber; as many as the endpoint's width, at most
 * DRAIN_CONCURRENCY), posted side by side and signed with the endpoint's secrets (decrypted here,
 * never passed through a workflow). A drain posts only in one of its tenant's turns
 * (MAX_ACTIVE_DRAINS_PER_TENANT drains of a tenant at once, across every worker); otherwise it
 * is parked and looks again later (further back in line, later). POSTs start at this process's
 * steady pace (OUTBOUND_WEBHOOK_MAX_ATTEMPTS_PER_SECOND), tenants taking turns in it. Each
 * attempt is recorded on its own (a savepoint each: one that cannot be written does not undo the
 * others), with its outcome: delivered, due again after the back-off (domain/outbound-retry.ts),
 * or failed. A delivery whose window is over
 * fails and disables the endpoint, saying why; a disabled endpoint's waiting deliveries fail
 * saying so; a refused address or port is not retried. Everything is read in the tenant's
 * transaction (RLS: another tenant's endpoint is not found).
 */
export function createOutboundActivities({ db, config, vault }: ActivityDeps) {
  const pace = fairPace(config.outboundWebhooks.maxAttemptsPerSecond);

  /** One POST, in its turn of the process's pace, and what follows from it; recorded by the caller. */
  async function attempt(
    tenantId: string,
    policy: OutboundRetryPolicy,
    url: string,
    secrets: string[],
    head: DueHead,
  ): Promise<AttemptOutcome> {
    await pace.turn(tenantId);
    const result = await postSigned({
      url,
      msgId: head.event_id,
      body: JSON.stringify(head.body),
      secrets,
      timeoutMs: policy.attemptTimeoutMs,
      allowPrivate: config.outboundWebhooks.allowPrivateAddresses,
      allowedPorts: config.outboundWebhooks.allowedPorts,
    });
    const succeeded = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
    const error = succeeded ? null : (result.error ?? `HTTP ${result.statusCode}`);
    const attempts = head.attempts + 1;
    const now = Date.now();
    const outcome: AttemptOutcome = {
      tenantId,
      deliveryId: head.id,
      attempt: attempts,
      statusCode: result.statusCode,
      latencyMs: result.latencyMs,
      responseExcerpt: result.excerpt,
      error,
      succeeded,
    };
    if (succeeded) return outcome;
    // A refused address fails its delivery alone; only the window running out disables the endpoint.
    if (result.refused) return { ...outcome, giveUp: error! };
    const next = afterFailedAttempt(policy, attempts, head.window_start_ms ?? now, now);
    return 'giveUp' in next
      ? { ...outcome, giveUp: `${next.giveUp}; last: ${error}`, windowOver: true }
      : { ...outcome, retryAt: new Date(next.retryAtMs) };
  }

  /**
   * One attempt in a savepoint of its own. Refused as it is (whatever the receiver's answer held),
   * it is recorded without the answer, saying why; false only if even that cannot be written.
   * Postgres away is not the attempt's fault: thrown, for the drain to hand back.
   */
  async function recordOne(trx: Knex.Transaction, o: AttemptOutcome): Promise<boolean> {
    try {
      await trx.transaction((sp) => recordAttemptOutcome(sp, o));
      return true;
    } catch (e) {
      if (isDatabaseUnavailable(e)) throw e;
      logger.warn(
        { deliveryId: o.deliveryId, code: codeOf(e) },
        'outbound attempt not recorded as it was; recording it without the answer',
      );
      try {
        const error = `${o.error ? `${o.error}; ` : ''}the answer could not be stored (${codeOf(e)})`;
        await trx.transaction((sp) => recordAttemptOutcome(sp, { ...o, responseExcerpt: null, error }));
        return true;
      } catch (e2) {
        if (isDatabaseUnavailable(e2)) throw e2;
        logger.warn({ deliveryId: o.deliveryId, code: codeOf(e2) }, 'outbound attempt could not be recorded');
        return false;
      }
    }
  }

  /**
   * A round's attempts, each on its own; the endpoint's width and, if a window ran out, its disabling. Answers those
   * not recorded.
   */
  function recordRound(
    tenantId: string,
    endpointId: string,
    outcomes: AttemptOutcome[],
    width: number | null,
  ): Promise<AttemptOutcome[]> {
    return withTenant(db, tenantId, async (trx) => {
      const unrecorded: AttemptOutcome[] = [];
      for (const o of outcomes) if (!(await recordOne(trx, o))) unrecorded.push(o);
      const over = outcomes.find((o) => o.windowOver && !unrecorded.includes(o));
      if (over)
        await updateEndpoint(trx, endpointId, {
          enabled: false,
          disabledReason: `disabled automatically: ${over.giveUp}`,
        });
      if (width !== null) await setDrainWidth(trx, endpointId, width);
      return unrecorded;
    });
  }

  return {
    async drainOutbound(input: {
      tenantId: string;
      endpointId: string;
      policy: OutboundRetryPolicy;
    }): Promise<DrainResult> {
      const { tenantId, endpointId, policy } = input;
      const started = Date.now();
      // A round's attempts wait their turn of the pace (a few seconds at most), then take up to the attempt timeout.
      const roundLeaseMs = LEASE_MS + policy.attemptTimeoutMs + 3000;
      let attempted = 0;
      let lastWork = started;
      // A lease of any kind (the dispatcher need not wake us) until then; 0: none.
      let leaseUntil = 0;
      // Whether that lease holds one of the tenant's turns to post.
      let posting = false;
      const answer = (more: boolean, nextDueInMs: number | null): DrainResult => ({
        gone: false,
        attempted,
        more,
        nextDueInMs,
      });
      try {
        for (;;) {
          const renew = leaseUntil > 0 && Date.now() > leaseUntil - LEASE_MS / 2;
          const round = await withTenant(db, tenantId, async (trx) => {
            const endpoint = await endpointToDrain(trx, endpointId);
            if (!endpoint) return { gone: true } as const;
            if (!endpoint.enabled) {
              await failPendingDeliveries(
                trx,
                { endpointId },
                `endpoint disabled: ${endpoint.disabled_reason ?? 'disabled'}`,
              );
              // A parked lease of its own would keep its place in its tenant's line until it ran out.
              await releaseDrainLease(trx, endpointId);
              return { disabled: true } as const;
            }
            const width = widthOf(endpoint.drain_width);
            const heads = await dueHeads(trx, endpointId, width);
            if (heads.due.length) {
              // A round that posts holds its tenant's turn until its slowest attempt is over.
              if (!posting) {
                const turn = await takeDrainTurn(trx, tenantId, endpointId, {
                  leaseMs: roundLeaseMs,
                  parkMsFor,
                  cap: MAX_ACTIVE_DRAINS_PER_TENANT,
                });
                if (!turn.granted) return { parkedMs: turn.parkMs } as const;
              } else await holdDrainLease(trx, tenantId, endpointId, roundLeaseMs);
            } else if (!leaseUntil) {
              // Nothing to post and no lease: hand back (a new delivery wakes the drain through the outbox).
              return { idle: heads.nextDueInMs } as const;
            } else if (posting || renew) await lookingDrainLease(trx, tenantId, endpointId, LEASE_MS);
            return {
              endpoint,
              width,
              heads,
              secrets: heads.due.length ? await signingSecrets(trx, vault, endpointId) : [],
            };
          });
          // The heads' event ages were read then; the event → delivered lag adds what passed since.
          const readAt = Date.now();
          if ('gone' in round) return { gone: true, attempted, more: false, nextDueInMs: null };
          if ('disabled' in round) return answer(false, null);
          if ('idle' in round) return answer(false, round.idle ?? null);
          if ('parkedMs' in round) {
            // The tenant's other drains have its turns: the parked lease is ours now, released by nobody; look again
            // when it ends.
            leaseUntil = 0;
            posting = false;
            return answer(false, round.parkedMs! - PARK_GRACE_MS + Math.floor(Math.random() * 500));
          }
          const { endpoint, width, heads, secrets } = round;
          if (heads.due.length) {
            posting = true;
            leaseUntil = Date.now() + roundLeaseMs;
          } else if (posting || renew) {
            posting = false;
            leaseUntil = Date.now() + LEASE_MS;
          }
          const overBudget = Date.now() - started > DRAIN_BUDGET_MS;
          if (heads.due.length) {
            if (overBudget) return answer(true, 0);
            const outcomes = await Promise.all(
              heads.due.map((h) => attempt(tenantId, policy, endpoint.url, secrets, h)),
            );
            attempted += outcomes.length;
            const slow = outcomes.some((o) => o.latencyMs >= policy.attemptTimeoutMs / 2);
            const newWidth = nextDrainWidth(width, slow);
            const unrecorded = await recordRound(tenantId, endpointId, outcomes, newWidth !== width ? newWidth : null);
            if (unrecorded.length) {
              // Temporal tries the drain again (a bounded number of times: workflows/outbound-delivery.ts), and
              // then fails these deliveries with this reason (settleFailedDrain).
              throw ApplicationFailure.retryable(
                `the attempt of ${unrecorded.length} deliver${unrecorded.length === 1 ? 'y' : 'ies'} could not be recorded`,
                'OutboundAttemptNotRecorded',
                { deliveryIds: unrecorded.map((o) => o.deliveryId) },
              );
            }
            // Delivered and recorded (committed): event created → delivered.
            for (const [i, o] of outcomes.entries())
              if (o.succeeded)
                outboundEventToDelivered.observe(heads.due[i].event_age_s + (Date.now() - readAt) / 1000);
            lastWork = Date.now();
            heartbeat({ attempted });
            if (slow) {
              // A slow receiver: its tenant's turn goes to another endpoint, and this one pauses.
              const pause = slowPauseMs(newWidth);
              await withTenant(db, tenantId, (trx) => parkDrain(trx, tenantId, endpointId, pause + PARK_GRACE_MS));
              leaseUntil = 0;
              posting = false;
              return answer(false, pause);
            }
            continue;
          }
          // Nothing due: linger a little (events come in bursts), holding a lease but no turn so
          // the dispatcher need not wake us; then let go, and look once more after letting go.
          if (!overBudget && Date.now() - lastWork < LINGER_MS) {
            heartbeat({ attempted });
            await sleep(POLL_MS);
            continue;
          }
          await withTenant(db, tenantId, (trx) => releaseDrainLease(trx, endpointId));
          leaseUntil = 0;
          posting = false;
          const last = await withTenant(db, tenantId, (trx) => dueHeads(trx, endpointId, 1));
          if (last.due.length) {
            if (overBudget) return answer(true, 0);
            continue;
          }
          return answer(false, last.nextDueInMs);
        }
      } catch (e) {
        // Postgres away is nobody's delivery's fault: hand back and look again later, spending
        // none of the drain's tries. A POST whose attempt was not recorded is sent again then.
        if (!isDatabaseUnavailable(e)) throw e;
        logger.warn(
          { tenantId, endpointId, code: codeOf(e) },
          'outbound drain: database unavailable; looking again later',
        );
        return answer(false, DATABASE_AWAY_MS);
      } finally {
        // Cancelled or failed while holding a lease: let go so the next delivery wakes a new drain at once.
        if (leaseUntil)
          await withTenant(db, tenantId, (trx) => releaseDrainLease(trx, endpointId)).catch(() => undefined);
      }
    },

    /**
     * The drain failed every try Temporal gave it (workflows/outbound-delivery.ts): the deliveries
     * it could not get past (the endpoint's due heads) are failed, each with an attempt saying
     * why, so the delivery log shows it and nothing is posted again until someone replays them.
     * Counted like any failed attempt: one whose retry window is over disables the endpoint too.
     */
    async settleFailedDrain(input: {
      tenantId: string;
      endpointId: string;
      policy: OutboundRetryPolicy;
      reason: string;
      tries: number;
    }): Promise<{ failed: number }> {
      const { tenantId, endpointId, policy } = input;
      const why = `the drain failed ${input.tries} times in a row: ${input.reason}`;
      return withTenant(db, tenantId, async (trx) => {
        const endpoint = await endpointToDrain(trx, endpointId);
        if (!endpoint) return { failed: 0 };
        const heads = await dueHeads(trx, endpointId, widthOf(endpoint.drain_width));
        const now = Date.now();
        let over: string | undefined;
        for (const h of heads.due) {
          const attempts = h.attempts + 1;
          if ('giveUp' in afterFailedAttempt(policy, attempts, h.window_start_ms ?? now, now)) over = why;
          const outcome: AttemptOutcome = {
            tenantId,
            deliveryId: h.id,
            attempt: attempts,
            statusCode: null,
            latencyMs: 0,
            responseExcerpt: null,
            error: why,
            succeeded: false,
            giveUp: why,
          };
          // The attempt's row if even that can be written; the delivery's state in any case.
          try {
            await trx.transaction((sp) => recordAttemptOutcome(sp, outcome));
          } catch (e) {
            if (isDatabaseUnavailable(e)) throw e;
            await settleDelivery(trx, outcome);
          }
        }
        if (over)
          await updateEndpoint(trx, endpointId, {
            enabled: false,
            disabledReason: `disabled automatically: no 2xx within the retry window; last: ${over}`,
          });
        await releaseDrainLease(trx, endpointId);
        logger.warn(
          { tenantId, endpointId, failed: heads.due.length, reason: input.reason },
          'outbound drain failed repeatedly; its deliveries failed',
        );
        return { failed: heads.due.length };
      });
    },
  };
}
