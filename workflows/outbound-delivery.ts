import { ActivityFailure, allHandlersFinished, ApplicationFailure, condition, continueAsNew, defineSignal, log, proxyActivities, setHandler, TimeoutFailure, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';

/** How a delivery is retried (from the worker's configuration, carried in the input so a run keeps its own). */
export interface OutboundPolicy {
  attemptTimeoutMs: number;
  firstRetryMs: number;
  retryWindowMs: number;
}

export interface OutboundInput {
  tenantId: string;
  endpointId: string;
  /** `sub-<hash>`: one subscriber's events, delivered in order; `evt-<event id>`: one event. */
  orderKey: string;
  policy: OutboundPolicy;
  /** Carried across continue-as-new. */
  pending?: string[];
}

export interface OutboundHandoverSignal {
  tenantId: string;
  deliveryIds: string[];
}
export const outboundDeliverSignal = defineSignal<[OutboundHandoverSignal]>('deliver');

/** Back-off cap: the doubling stops at two hours, so a three-day window makes about 40 attempts. */
const MAX_INTERVAL_MS = 2 * 3_600_000;
/** The retry window as people write it: `72 h`, `15 min`, `8 s`. */
function windowText(ms: number): string {
  if (ms >= 3_600_000) return `${Math.round(ms / 3_600_000)} h`;
  if (ms >= 60_000) return `${Math.round(ms / 60_000)} min`;
  return `${Math.round(ms / 1_000)} s`;
}

/** An idle workflow ends after this; the next event starts a new run under the same id. */
const IDLE_MS = 60_000;

/**
 * The deliveries of one endpoint for one subscriber (or one event) of one tenant
 * (`outbound-<tenant>-<endpoint>-<order key>`), fed by signal-with-start from the outbound
 * outbox. One at a time, in the order they were recorded: the next waits while one is being
 * retried, so a receiver never sees a subscriber's `expired` before its `active`. Each delivery
 * is one activity with Temporal's retry policy (exponential back-off, per-attempt timeout, the
 * whole retry window as schedule-to-close); the history holds ids only.
 */
export async function outboundDeliveryWorkflow(input: OutboundInput): Promise<void> {
  const inbox: string[] = [...(input.pending ?? [])];
  setHandler(outboundDeliverSignal, (s) => {
    if (s.tenantId !== input.tenantId) {
      log.warn('outbound hand-over for another tenant refused', { own: input.tenantId, named: s.tenantId });
      return;
    }
    for (const id of s.deliveryIds) if (!inbox.includes(id)) inbox.push(id);
  });
  const { policy } = input;
  const { deliverOutbound } = proxyActivities<Activities>({
    startToCloseTimeout: policy.attemptTimeoutMs + 5_000,
    scheduleToCloseTimeout: policy.retryWindowMs,
    retry: { initialInterval: policy.firstRetryMs, backoffCoefficient: 2, maximumInterval: Math.max(policy.firstRetryMs, MAX_INTERVAL_MS), nonRetryableErrorTypes: ['AddressRefused'] },
  });
  const { giveUpOutbound } = proxyActivities<Activities>({ startToCloseTimeout: '30 seconds', retry: { maximumInterval: '1 minute' } });

  for (;;) {
    if (inbox.length === 0 && !(await condition(() => inbox.length > 0, IDLE_MS))) return;
    const deliveryId = inbox[0];
    try {
      await deliverOutbound({ tenantId: input.tenantId, deliveryId });
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      // The window is over when Temporal gives up on time: the next back-off would pass schedule-to-close, or it passed.
      const windowOver = err.retryState === 'TIMEOUT' || err.cause instanceof TimeoutFailure;
      const last = err.cause instanceof ApplicationFailure ? err.cause.message : ((err.cause?.cause as Error | undefined)?.message ?? err.cause?.message ?? 'failed');
      const reason = windowOver ? `no 2xx within the retry window (${windowText(policy.retryWindowMs)})` : last;
      await giveUpOutbound({ tenantId: input.tenantId, deliveryId, endpointId: input.endpointId, reason, disableEndpoint: windowOver, lastFailure: last });
    }
    inbox.shift();
    if (workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof outboundDeliveryWorkflow>({ ...input, pending: inbox });
    }
  }
}
