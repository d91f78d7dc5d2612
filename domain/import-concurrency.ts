import { runFairly } from './outbound-limits';

/**
 * Customers of one web import page handed over at once. One at a time, a page waited on the sum
 * of its round trips; a hand-over is one signal-with-start to the customer's lifecycle workflow
 * (no database connection held: the workflow applies the events afterwards, on its own task
 * slots), so the width is bounded by the Temporal server's answers. Measured at 1,500 psp_a
 * subscriptions in one session (bench/RESULTS.md, import section): 8 at a time 40-44
 * subscriptions/s, 16 at a time 66.
 */
export const IMPORT_ITEMS_IN_FLIGHT = 16;

/**
 * Lines of a store file in flight at once. Here the store's pacer sets the rate (its documented
 * limit: Play 3,000 a minute), so the width only has to cover a line's round trips at that rate:
 * at 50 lookups a second and 200-300 ms a line (the lookup, then one transaction for its claim,
 * write and outcome) on a loaded machine, 12-15 lines are busy; 16 leave room. Eight kept the
 * lookups at 0.75 of Play's limit (bench/RESULTS.md). A line holds a database connection only
 * for its one transaction.
 */
export const IMPORT_STORE_LINES_IN_FLIGHT = 16;

/**
 * For each item, the key of its ordering group: items sharing any key (the same customer, the
 * same purchase) land in one group, so they run one after another in page order while other
 * groups run beside them. Whichever of two lines naming the same purchase comes first in the
 * file claims it, as when every line ran in turn.
 */
export function orderingGroups<T>(items: readonly T[], keysOf: (item: T) => string[]): string[] {
  const parent = items.map((_, i) => i);
  const root = (i: number): number => {
    while (parent[i] !== i) i = parent[i] = parent[parent[i]];
    return i;
  };
  const owner = new Map<string, number>();
  items.forEach((item, i) => {
    for (const k of keysOf(item)) {
      const o = owner.get(k);
      if (o === undefined) owner.set(k, i);
      else {
        const [a, b] = [root(o), root(i)];
        if (a !== b) parent[Math.max(a, b)] = Math.min(a, b);
      }
    }
  });
  return items.map((_, i) => String(root(i)));
}

/**
 * Runs `work` on every item, `width` at a time, the items of one group strictly in order. On the
 * first failure nothing new starts and the failure is thrown once the items in flight have
 * settled, so an activity retried after it never runs beside its own leftovers.
 */
export async function runGrouped<T>(
  items: readonly T[],
  groupOf: readonly string[],
  width: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  const state: { failed?: { err: unknown } } = {};
  const indexed = items.map((item, i) => ({ item, group: groupOf[i] }));
  await runFairly(
    indexed,
    (x) => x.group,
    { total: width, perKey: 1 },
    async (x) => {
      if (state.failed) return;
      try {
        await work(x.item);
      } catch (err) {
        state.failed ??= { err };
      }
    },
  );
  if (state.failed) throw state.failed.err;
}

/**
 * Activity slots one tenant's imports and reconciliations (import pages, customer refreshes,
 * scheduled reconciliation pages) hold at once, across every worker process (their turns are
 * leases in `tenant_work_leases`). These wait on a provider's pacer while they hold a slot, so
 * without a share one tenant's burst filled the worker; a page refused a turn holds no slot: its
 * workflow waits WORK_PARK_MS on a durable timer and asks again. Docs: docs/limits.md.
 */
export const WORK_TURNS_PER_TENANT = 4;
/** How long a page refused its tenant's turn waits before asking again. */
export const WORK_PARK_MS = 2_000;
/**
 * A turn's lease, renewed as the page heartbeats: a worker that dies holding one gives it back
 * when it runs out (a page's attempts heartbeat every few seconds; 60 s covers a stalled one).
 */
export const WORK_LEASE_MS = 60_000;

/** What an import or reconciliation page answers when its tenant has no turn free. */
export interface Parked {
  parkedMs: number;
}
export const isParked = (v: unknown): v is Parked =>
  typeof v === 'object' && v !== null && typeof (v as Parked).parkedMs === 'number';
