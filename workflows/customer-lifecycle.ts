import {
  allHandlersFinished,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  log,
  proxyLocalActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { entitlementFor } from '../domain/entitlement';
import { applyEvent, deriveSubscriptions, type LifecycleEvent, type LifecycleState } from '../domain/subscription';
import { startTransfer } from './transfer';

/**
 * The write, as a local activity: it runs on the worker inside the workflow task that woke on
 * the signal, so an event costs one workflow task instead of a workflow task, an activity task and
 * a second workflow task (bench/payment-to-premium.ts, docs/temporal.md). The write is one
 * idempotent transaction (same input, same rows), which is what a local activity's at-least-once
 * retries need.
 */
const { writeLifecycle } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '15 seconds',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '10 seconds' },
});

/** What the webhook outbox's dispatcher sends: several events of the customer at once, naming their tenant. */
export interface LifecycleHandover {
  tenantId: string;
  events: LifecycleEvent[];
}
export const lifecycleHandoverSignal = defineSignal<[LifecycleHandover]>('handover');
/** The events the workflow holds (its customer's event history, ids, kinds and times). */
export const lifecycleEventsQuery = defineQuery<LifecycleEvent[]>('events');

export interface LifecycleInput {
  tenantId: string;
  provider: string;
  /** The provider's customer (or store purchase) the events belong to. */
  customerKey: string;
  /** Carried across continue-as-new. */
  state?: LifecycleState;
}

/**
 * The entity workflow of one provider customer of one tenant (`customer-<tenant>-<provider>-<customer>`),
 * fed by signal-with-start from the webhook outbox. A hand-over naming another tenant is refused:
 * provider customer ids are not unique across tenants, and the workflow writes only as its own. It applies the pure
 * lifecycle rules to every new
 * event (duplicates change nothing), writes the derived subscriptions and entitlements through
 * a local activity, and keeps a durable timer for the next change that happens by itself (a grace
 * period or a paid period running out). Its history is the customer's event history.
 */
export async function customerLifecycleWorkflow(input: LifecycleInput): Promise<void> {
  let state: LifecycleState = input.state ?? { events: [] };
  const inbox: LifecycleEvent[] = [];
  setHandler(lifecycleHandoverSignal, (h) => {
    if (h.tenantId !== input.tenantId) {
      log.warn('hand-over for another tenant refused', {
        own: input.tenantId,
        named: h.tenantId,
        events: h.events.length,
      });
      return;
    }
    inbox.push(...h.events);
  });
  setHandler(lifecycleEventsQuery, () => state.events);
  let nextChange: string | null = null;

  for (;;) {
    const wait = nextChange ? Math.max(0, Date.parse(nextChange) - Date.now()) : null;
    // Without a timer, a wait whose condition already holds is skipped: the signal-with-start's
    // hand-over is in the inbox before the loop first runs (setHandler delivers buffered signals).
    // `condition` without a timeout makes no command, so histories are unchanged; what is saved is
    // the promises it makes, each of which the SDK records a stack for (docs/temporal.md).
    let woke = true;
    if (wait !== null) woke = await condition(() => inbox.length > 0, wait);
    else if (inbox.length === 0) await condition(() => inbox.length > 0);
    const batch = inbox.splice(0);
    let changed = !woke; // a timer firing re-evaluates the entitlements
    for (const e of batch) {
      const step = applyEvent(state, e);
      state = step.state;
      if (step.effects.some((x) => x.type === 'write')) changed = true;
    }
    const now = new Date().toISOString();
    const subscriptions = deriveSubscriptions(state.events);
    const entitlements = subscriptions.map((s) => entitlementFor(s, now));
    if (changed || batch.length > 0) {
      const written = await writeLifecycle({
        tenantId: input.tenantId,
        provider: input.provider,
        subscriptions,
        entitlements,
        eventIds: batch.map((e) => e.id),
        // An import brings in what the tenant's backend already knows: its writes send no outbound events.
        quiet: batch.length > 0 && batch.every((e) => e.source === 'import'),
      });
      // A re-link the restore policy turned into a transfer (docs/transfers.md): its own workflow.
      // Histories from before the write answered nothing.
      for (const t of written?.transfers ?? []) await startTransfer(input.tenantId, input.provider, t);
    }
    nextChange =
      entitlements
        .map((e) => e.next_change_at)
        .filter((t): t is string => !!t)
        .sort()[0] ?? null;
    if (workflowInfo().continueAsNewSuggested && inbox.length === 0) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof customerLifecycleWorkflow>({ ...input, state });
    }
  }
}
