import {
  ActivityFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  defineSignal,
  isCancellation,
  log,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { activityCause } from './activity-failure';
import { DRAIN_BUDGET_MS, type OutboundRetryPolicy } from '../domain/outbound-retry';

export interface OutboundInput {
  tenantId: string;
  endpointId: string;
  /** From the worker's configuration, carried in the input so a run keeps its own. */
  policy: OutboundRetryPolicy;
}

export interface OutboundWakeSignal {
  tenantId: string;
}
/** Deliveries for the endpoint were recorded (or replayed): drain. */
export const outboundWakeSignal = defineSignal<[OutboundWakeSignal]>('wake');

/** An idle workflow ends after this; the next event starts a new run under the same id. */
const IDLE_MS = 60_000;
/**
 * A drain's rounds stop after DRAIN_BUDGET_MS; the last round takes one attempt's timeout at most; then room to record.
 */
const DRAIN_MARGIN_MS = DRAIN_BUDGET_MS + 30_000;
/**
 * Tries Temporal gives one drain (1 s, 2 s, 4 s, 8 s apart by default: the policy's drainRetryMs,
 * OUTBOUND_WEBHOOK_DRAIN_RETRY_MS, doubling). A drain fails when something it
 * cannot get past keeps failing it (an attempt that cannot be recorded, a secret that cannot be
 * decrypted); Postgres away is not a failure (it hands back and looks again). After the last try
 * the deliveries it was on are failed, saying why (settleFailedDrain), instead of being posted
 * again for ever.
 */
export const DRAIN_TRIES = 5;

/**
 * One endpoint of one tenant (`outbound-<tenant>-<endpoint>`), woken by signal-with-start from
 * the outbound outbox, on the outbound task queue (domain/outbound-queue.ts), which only the
 * outbound worker serves. Each wake-up
 * runs one drain activity, which attempts what is due (a subscriber's deliveries in order,
 * others side by side) and answers when the next retry is; the workflow sleeps until then or
 * until woken again. The retry schedule lives on the delivery rows, so Temporal sees one
 * activity per burst of events, not one workflow per delivery: the fan-out costs the inbound
 * path's Temporal little. A drain that fails DRAIN_TRIES times fails the deliveries it could not
 * get past, with the reason, and goes on. The history holds ids, counts and failure reasons only.
 */
export async function outboundDeliveryWorkflow(input: OutboundInput): Promise<void> {
  let woken = true;
  setHandler(outboundWakeSignal, (s) => {
    if (s.tenantId !== input.tenantId) {
      log.warn('outbound wake-up for another tenant refused', { own: input.tenantId, named: s.tenantId });
      return;
    }
    woken = true;
  });
  const { drainOutbound } = proxyActivities<Activities>({
    startToCloseTimeout: input.policy.attemptTimeoutMs + DRAIN_MARGIN_MS,
    heartbeatTimeout: input.policy.attemptTimeoutMs + 30_000,
    retry: {
      initialInterval: input.policy.drainRetryMs ?? 1_000,
      backoffCoefficient: 2,
      maximumInterval: '1 minute',
      maximumAttempts: DRAIN_TRIES,
    },
  });
  // Only writes to Postgres: retried until it can (its writes are the way out of the loop).
  const { settleFailedDrain } = proxyActivities<Activities>({
    startToCloseTimeout: '1 minute',
    retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
  });

  let waitMs: number | null = null;
  for (;;) {
    if (!woken) {
      const signalled = await condition(() => woken, waitMs ?? IDLE_MS);
      if (!signalled && waitMs === null) return;
    }
    woken = false;
    let r: Awaited<ReturnType<typeof drainOutbound>>;
    try {
      r = await drainOutbound({ tenantId: input.tenantId, endpointId: input.endpointId, policy: input.policy });
    } catch (err) {
      if (!(err instanceof ActivityFailure) || isCancellation(err)) throw err;
      const cause = activityCause(err);
      const reason = cause instanceof Error ? cause.message : String(cause);
      log.warn('outbound drain failed every try; failing its deliveries', { endpointId: input.endpointId, reason });
      await settleFailedDrain({
        tenantId: input.tenantId,
        endpointId: input.endpointId,
        policy: input.policy,
        reason,
        tries: DRAIN_TRIES,
      });
      // What else is due goes out at once.
      woken = true;
      waitMs = null;
      continue;
    }
    if (r.gone) return;
    if (r.more) woken = true;
    waitMs = r.nextDueInMs;
    if (workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof outboundDeliveryWorkflow>(input);
    }
  }
}
