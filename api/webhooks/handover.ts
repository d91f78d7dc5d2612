import type { Client } from '@temporalio/client';
import type { LifecycleEvent } from '../../domain/subscription';
import { signalLifecycleBatch, startStoreNotification } from '../../temporal/workflow-starts';
import type { StoreNotificationInput } from '../../workflows/store-purchase';

/**
 * What the receiver stores beside a delivery (the outbox row) so its processing can start later,
 * for all five providers alike. It names its tenant, and carries ids and hashes only: the buyer's
 * email stays on the delivery row and a Play token is sealed (providers/purchase-ref.ts), because
 * whatever is handed over lands in a workflow history.
 */
export type Handover = (
  | { kind: 'lifecycle'; tenantId: string; provider: string; customerKey: string; event: LifecycleEvent }
  | { kind: 'store'; notification: StoreNotificationInput }
) & {
  /**
   * The receipt's W3C traceparent when tracing is on: the hand-over continues that trace (never sent to the workflow).
   */
  trace?: string;
};

/**
 * Rows with the same key go to Temporal in one call. The tenant is part of every key: two
 * tenants' customers with the same provider id are two workflows, never one.
 */
export function groupKey(h: Handover): string {
  return h.kind === 'lifecycle'
    ? ['lifecycle', h.tenantId, h.provider, h.customerKey].join('\u0000')
    : ['store', h.notification.tenantId, h.notification.provider, h.notification.eventId].join('\u0000');
}

/** Hand one group to Temporal: a customer's events in one signal-with-start, or a store notification's workflow. */
export async function handOver(client: Client, taskQueue: string, group: Handover[]): Promise<void> {
  const first = group[0];
  if (first.kind === 'lifecycle') {
    const events = group.map((h) => (h as Extract<Handover, { kind: 'lifecycle' }>).event);
    await signalLifecycleBatch(
      client,
      taskQueue,
      { tenantId: first.tenantId, provider: first.provider, customerKey: first.customerKey },
      events,
    );
  } else {
    await startStoreNotification(client, taskQueue, first.notification);
  }
}

/**
 * A checkout's events reach the receiver a few milliseconds apart (each after the answer to the
 * one before). Handed over as they come, each would be a signal and, often, a workflow task and
 * a write of its own; gathered, the checkout is one signal, one workflow task, one write
 * (bench/RESULTS.md, "CPU per purchase"). So a customer's rows wait until SETTLE_MS passed with
 * no newer row of theirs, and never longer than MAX_HOLD_MS after their oldest (a customer whose
 * events keep coming is still handed over). A store notification is one event: never held.
 */
export const SETTLE_MS = 50;
export const MAX_HOLD_MS = 500;

/** How much longer a group's rows wait before their hand-over (0: now), from their ages in ms. */
export function settleWaitMs(group: readonly { handover: Handover; age_ms: number }[]): number {
  if (group[0].handover.kind !== 'lifecycle') return 0;
  const ages = group.map((r) => r.age_ms);
  const newest = Math.min(...ages);
  const oldest = Math.max(...ages);
  const wait = Math.min(SETTLE_MS - newest, MAX_HOLD_MS - oldest);
  return wait > 0 ? Math.ceil(wait) : 0;
}
