import { allHandlersFinished, condition, continueAsNew, defineSignal, log, makeContinueAsNewFunc, patched, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { DRAIN_BUDGET_MS, type OutboundRetryPolicy } from '../domain/outbound-retry';
import { isOutboundTaskQueue, outboundTaskQueue } from '../domain/outbound-queue';

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
/** A drain's rounds stop after DRAIN_BUDGET_MS; the last round takes one attempt's timeout at most; then room to record. */
const DRAIN_MARGIN_MS = DRAIN_BUDGET_MS + 30_000;

/**
 * One endpoint of one tenant (`outbound-<tenant>-<endpoint>`), woken by signal-with-start from
 * the outbound outbox, on the outbound task queue (domain/outbound-queue.ts), which only the
 * outbound worker serves (a run started before the split moves there, below). Each wake-up
 * runs one drain activity, which attempts what is due (a subscriber's deliveries in order,
 * others side by side) and answers when the next retry is; the workflow sleeps until then or
 * until woken again. The retry schedule lives on the delivery rows, so Temporal sees one
 * activity per burst of events, not one workflow per delivery: the fan-out costs the inbound
 * path's Temporal little. The history holds ids and counts only.
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
    retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
  });

  let waitMs: number | null = null;
  for (;;) {
    if (!woken) {
      const signalled = await condition(() => woken, waitMs ?? IDLE_MS);
      if (!signalled && waitMs === null) return;
    }
    woken = false;
    // A run started on the deployment's queue before deliveries had their own (its drain is
    // served there only for it) moves to the outbound queue at its next wake-up; the new run
    // starts awake. `patched` keeps replays of its earlier history unchanged.
    const queue = workflowInfo().taskQueue;
    if (!isOutboundTaskQueue(queue) && patched('outbound-own-task-queue')) {
      await condition(allHandlersFinished);
      await makeContinueAsNewFunc<typeof outboundDeliveryWorkflow>({ taskQueue: outboundTaskQueue(queue) })(input);
    }
    const r = await drainOutbound({ tenantId: input.tenantId, endpointId: input.endpointId, policy: input.policy });
    if (r.gone) return;
    if (r.more) woken = true;
    waitMs = r.nextDueInMs;
    if (workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof outboundDeliveryWorkflow>(input);
    }
  }
}
