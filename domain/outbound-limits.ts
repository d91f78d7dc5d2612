/**
 * What one tenant may ask of outbound webhooks, so no tenant crowds another's deliveries
 * (docs/outbound-webhooks.md, "Limits"). Counted in the database, so they hold across every
 * api and outbound worker process.
 */

/** Webhook endpoints one tenant may have; one more is refused (409 `endpoint_limit_reached`). */
export const MAX_ENDPOINTS_PER_TENANT = 20;

/**
 * Drains of one tenant that post at once, across every outbound worker (counted on the drains'
 * leases, `outbound_drains`). A further endpoint of that tenant with work due waits its turn
 * (parked for DRAIN_PARK_MS) instead of taking a worker slot: one tenant's slow receivers hold
 * at most this many of the worker's slots, whatever their number.
 */
export const MAX_ACTIVE_DRAINS_PER_TENANT = 4;
/** How long a drain waits for its tenant's turn before it looks again. */
export const DRAIN_PARK_MS = 2_000;

/** Deliveries one replay call queues at most; the answer's `has_more` says to call again. */
export const REPLAY_BATCH = 250;
/**
 * Replays queue nothing past this many waiting (`pending`) deliveries of the tenant: a replay
 * fills up to it, and at it the call is refused (429 `replay_quota_exceeded`) until the
 * waiting ones are through. Replaying into a backlog would only lengthen it.
 */
export const REPLAY_PENDING_CAP = 1000;

/**
 * Text as a Postgres `text` column stores it. A receiver's answer is anybody's bytes: NUL (which
 * `text` refuses, failing the whole write) is kept as the visible escape `\u0000`, a surrogate
 * left alone by the cut at `maxChars` becomes U+FFFD. Everything else is kept as it came.
 */
export function storableText(s: string, maxChars: number): string {
  return (
    s
      // eslint-disable-next-line no-control-regex
      .replace(/\u0000/g, '\\u0000')
      .slice(0, maxChars)
      .replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD')
  );
}

/**
 * A steady pace of `perSecond` starts, with a burst of up to a tenth of a second's worth after a
 * pause: `waitMs(now)` says how long until the next start may go, `take(now)` books it (and says
 * how long to wait for it).
 */
export function steadyPace(perSecond: number): { waitMs(now: number): number; take(now: number): number } {
  const interval = 1000 / perSecond;
  const burstMs = Math.max(interval, 100);
  let next = 0;
  const slot = (now: number) => Math.max(next, now - burstMs);
  return {
    waitMs: (now) => Math.max(0, slot(now) - now),
    take(now) {
      const at = slot(now);
      next = at + interval;
      return Math.max(0, at - now);
    },
  };
}

/**
 * The steady pace shared out fairly: callers queue by key (the tenant), and each start that comes
 * due goes to the next key in turn (round-robin), not to whoever asked first. So a tenant with
 * many POSTs waiting delays another tenant's next POST by about one start, not by its whole queue.
 */
export function fairPace(
  perSecond: number,
  clock: { now(): number; after(ms: number, fn: () => void): void } = {
    now: Date.now,
    after: (ms, fn) => void setTimeout(fn, ms),
  },
) {
  const pace = steadyPace(perSecond);
  const queues = new Map<string, (() => void)[]>();
  const keys: string[] = [];
  let turn = 0;
  let scheduled = false;
  const pump = () => {
    scheduled = false;
    while (keys.length) {
      const wait = pace.waitMs(clock.now());
      if (wait > 0) {
        scheduled = true;
        clock.after(wait, pump);
        return;
      }
      pace.take(clock.now());
      turn %= keys.length;
      const key = keys[turn];
      const q = queues.get(key)!;
      q.shift()!();
      if (q.length) turn++;
      else {
        queues.delete(key);
        keys.splice(turn, 1);
      }
    }
  };
  return {
    /** Resolves when it is `key`'s turn to start. */
    turn(key: string): Promise<void> {
      return new Promise<void>((resolve) => {
        const q = queues.get(key);
        if (q) q.push(resolve);
        else {
          queues.set(key, [resolve]);
          keys.push(key);
        }
        if (!scheduled) pump();
      });
    },
  };
}

/**
 * Runs `work` on every item, `total` at a time, at most `perKey` of one key at a time, and the
 * keys taking turns (round-robin): one key with many items neither fills the slots nor goes
 * before another key's first item. The outbound dispatcher's wake-ups, keyed by tenant.
 */
export async function runFairly<T>(
  items: readonly T[],
  keyOf: (item: T) => string,
  limits: { total: number; perKey: number },
  work: (item: T) => Promise<void>,
): Promise<void> {
  const queues = new Map<string, T[]>();
  for (const item of items) {
    const k = keyOf(item);
    const q = queues.get(k);
    if (q) q.push(item);
    else queues.set(k, [item]);
  }
  const running = new Map<string, number>();
  const order = [...queues.keys()];
  let turn = 0;
  let inFlight = 0;
  const next = (): [string, T] | null => {
    for (let i = 0; i < order.length; i++) {
      const k = order[(turn + i) % order.length];
      const q = queues.get(k)!;
      if (q.length && (running.get(k) ?? 0) < limits.perKey) {
        turn = (turn + i + 1) % order.length;
        return [k, q.shift()!];
      }
    }
    return null;
  };
  const left = () => [...queues.values()].some((q) => q.length);
  await new Promise<void>((resolve, reject) => {
    const pump = () => {
      for (
        let picked = inFlight < limits.total ? next() : null;
        picked;
        picked = inFlight < limits.total ? next() : null
      ) {
        const [k, item] = picked;
        inFlight++;
        running.set(k, (running.get(k) ?? 0) + 1);
        work(item).then(() => {
          inFlight--;
          running.set(k, running.get(k)! - 1);
          pump();
        }, reject);
      }
      if (!inFlight && !left()) resolve();
    };
    pump();
  });
}
