import type { LifecycleEvent } from '../../domain/subscription';
import { signalLifecycleBatch } from '../../temporal/workflow-starts';
import type { LifecycleInput } from '../../workflows/customer-lifecycle';
import { within } from '../health';
import type { Services } from '../services';

/** What the receiver stores beside a delivery so its processing can start later. */
export interface Handover {
  input: LifecycleInput;
  taskQueue: string;
  event: LifecycleEvent;
}

const BATCH = 200;
// No provider waits on the dispatcher: a slow Temporal is given time rather than timed out, since
// a signal that times out here may still have been recorded, and sending it again is pure load.
const HANDOVER_TIMEOUT_MS = 10_000;
// Signals in flight per pass: enough to keep Temporal busy, few enough not to queue behind each other.
const IN_FLIGHT = 16;
const SWEEP_MS = 1000;

export interface Dispatcher {
  /** Drain soon (the receiver calls this after each commit). */
  kick(): void;
  stop(): Promise<void>;
}

const dispatchers = new WeakMap<Services, Dispatcher>();

/** One dispatcher per process's services: created by the receiver on first use. */
export function dispatcherFor(services: Services): Dispatcher {
  let d = dispatchers.get(services);
  if (!d) {
    d = createDispatcher(services);
    dispatchers.set(services, d);
  }
  return d;
}

export async function stopDispatcher(services: Services): Promise<void> {
  await dispatchers.get(services)?.stop();
  dispatchers.delete(services);
}

/**
 * Drains `webhook_outbox` into Temporal: rows locked with SKIP LOCKED (so replicas share the
 * work and never send a row twice at once), grouped by customer workflow, one signal-with-start
 * per customer carrying all of that customer's events (16 in flight), then deleted in the same
 * transaction. A group Temporal does not accept within 10 s stays for the next pass. Kicked after every receipt
 * and swept every second, so a row left by a crashed replica or a Temporal outage is picked up
 * when it can be. Events batch by themselves under load: whatever arrives during one pass goes
 * in the next, which is what keeps the hand-over from costing one Temporal write per event.
 */
function createDispatcher(services: Services): Dispatcher {
  let running: Promise<void> | null = null;
  let again = false;
  let stopped = false;

  const pass = async (): Promise<number> => {
    const temporal = services.temporal;
    if (!temporal) return 0;
    return services.db.transaction(async (trx) => {
      const rows: { id: string; handover: Handover }[] = await trx('webhook_outbox').select('id', 'handover').orderBy('id').limit(BATCH).forUpdate().skipLocked();
      const groups = new Map<string, { h: Handover; events: LifecycleEvent[]; ids: string[] }>();
      for (const r of rows) {
        const key = `${r.handover.taskQueue}\u0000${r.handover.input.provider}\u0000${r.handover.input.customerKey}`;
        const g = groups.get(key) ?? { h: r.handover, events: [], ids: [] };
        g.events.push(r.handover.event);
        g.ids.push(r.id);
        groups.set(key, g);
      }
      const client = temporal.client;
      const queue = [...groups.values()];
      const done: string[] = [];
      await Promise.all(
        Array.from({ length: Math.min(IN_FLIGHT, queue.length) }, async () => {
          for (let g = queue.shift(); g; g = queue.shift()) {
            const group = g;
            try {
              await within(HANDOVER_TIMEOUT_MS, client.withDeadline(Date.now() + HANDOVER_TIMEOUT_MS, () => signalLifecycleBatch(client, group.h.taskQueue, group.h.input, group.events)));
              done.push(...group.ids);
            } catch {
              // Not taken: its rows stay, and the next pass sends them again.
            }
          }
        }),
      );
      if (done.length) await trx('webhook_outbox').whereIn('id', done).del();
      // A full batch that went through: more may be waiting.
      return rows.length === BATCH && done.length === rows.length ? 1 : 0;
    });
  };

  const run = async () => {
    do {
      again = false;
      try {
        if ((await pass()) > 0) again = true;
      } catch {
        // Postgres away: the rows are where they were, and the sweep tries again.
      }
    } while (again && !stopped);
  };

  const kick = () => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = run().finally(() => {
      running = null;
    });
  };

  const sweep = setInterval(kick, SWEEP_MS);
  sweep.unref();
  return {
    kick,
    async stop() {
      stopped = true;
      clearInterval(sweep);
      await running;
    },
  };
}
