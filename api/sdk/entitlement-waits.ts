import { Gauge } from 'prom-client';
import { listenForEntitlementChanges, subscriberHash, type EntitlementListener } from '../../db/entitlement-notify';
import { clientAddressKey } from '../../domain/client-address-key';
import { logger } from '../../runtime/logger';
import { clientRateRefusals, registry } from '../../runtime/metrics';
import { ApiError } from '../../operations/errors';
import type { Services } from '../../operations/services';

/**
 * The waiters of `GET /v1/sdk/subscribers/{id}?wait_for=premium` in this process, woken by the
 * process's LISTEN session (db/entitlement-notify.ts) when a committed write changes their app
 * user's entitlements. Every replica has its own listener and its own waiters; a NOTIFY reaches
 * them all, so a wait is answered whichever replica holds it and whichever process wrote.
 *
 * Waiters are keyed by `<tenant>:<subscriber hash>`: a notification names its tenant, so one for
 * tenant B never wakes a waiter of tenant A, and a woken waiter re-reads through its own tenant
 * transaction (RLS), never through anything the notification carried.
 *
 * A waiter follows its customer, not only the id it asked about: each read answers every id the
 * customer is known by (an anonymous id signed in, a backend merge: domain/aliases.ts), and the
 * waiter is then keyed by all of them, so a write under any of them wakes it. The writes notify
 * the id they wrote under, as before (no lookup of aliases on the write path); a new alias
 * notifies both of its ids (db/revenuecat.ts), so a waiter whose customer grew re-reads and
 * follows the new id. What was notified while a read was under way is kept for that read, so a
 * write under an id the read has just learned of is not missed.
 */

/** The longest wait a request may ask for; longer asks are clamped to it. */
export const MAX_WAIT_MS = 20_000;

/**
 * Concurrent waiters, per process. A waiter is a held socket and a promise (no database
 * connection, one timer), so the process bound is about sockets: half the listener's
 * connection cap (HTTP_MAX_CONNECTIONS, 2,000 by default), so held waits never starve ordinary
 * requests of sockets. Per tenant, so one tenant's app cannot take every slot; per (tenant,
 * client address; an IPv6 client's /64), so one holder of the public key cannot take its
 * tenant's; per app user, so one install looping waits cannot take its address's.
 */
export interface WaitLimits {
  perProcess: number;
  perTenant: number;
  perAddress: number;
  perUser: number;
}
export const WAIT_LIMITS: WaitLimits = { perProcess: 1_000, perTenant: 250, perAddress: 25, perUser: 2 };

export type WaitOutcome = 'changed' | 'timeout' | 'aborted';

export interface WaitSlot {
  /** Resolves on the next change of this customer (or one that came since the last call), the timeout, or the abort. */
  next(ms: number, signal: AbortSignal): Promise<WaitOutcome>;
  /** A read begins: what is notified for the tenant from now until `follow` is kept. */
  reading(): void;
  /**
   * The read answered the customer's ids: wake on a write under any of them from now on, and
   * look again at once when one the waiter did not follow yet was notified during the read.
   */
  follow(appUserIds: readonly string[]): void;
  leave(): void;
}

interface Waiter {
  tenantId: string;
  /** The keys it wakes on: the asked id's, then every id of its customer. */
  keys: Set<string>;
  /** While a read is under way: the subscriber hashes notified for the tenant meanwhile. */
  seen: Set<string> | null;
  pending: boolean;
  wake: ((o: WaitOutcome) => void) | null;
}

export class EntitlementWaits {
  private readonly byKey = new Map<string, Set<Waiter>>();
  /** Waits per asked app user (the per-user bound), apart from the keys they follow. */
  private readonly perUser = new Map<string, number>();
  /** Per tenant, the waiters whose read is under way. */
  private readonly reading = new Map<string, Set<Waiter>>();
  private readonly perTenant = new Map<string, number>();
  private readonly perAddress = new Map<string, number>();
  private readonly wakeups = new Map<string, number>();
  private total = 0;
  private stopped = false;

  constructor(private readonly limits: WaitLimits = WAIT_LIMITS) {}

  /**
   * Take a slot, or refuse: 429 for the app user's, the client address's or the tenant's share,
   * 503 when the process is full. `address` is the client's (`ctx.ip`); slots are counted per
   * its key (domain/client-address-key.ts: IPv6 by /64), within the tenant.
   */
  enter(tenantId: string, appUserId: string, address: string): WaitSlot {
    const key = `${tenantId}:${subscriberHash(tenantId, appUserId)}`;
    const addressKey = `${tenantId}:${clientAddressKey(address)}`;
    if ((this.perUser.get(key) ?? 0) >= this.limits.perUser)
      throw tooMany(
        429,
        'rate_limited',
        `At most ${this.limits.perUser} concurrent waits per app user; retry after 1 s.`,
        'wait_user',
      );
    if ((this.perAddress.get(addressKey) ?? 0) >= this.limits.perAddress) {
      throw tooMany(
        429,
        'rate_limited',
        `At most ${this.limits.perAddress} concurrent waits per client address; retry after 1 s (or read without wait_for).`,
        'wait_address',
      );
    }
    if ((this.perTenant.get(tenantId) ?? 0) >= this.limits.perTenant)
      throw tooMany(
        429,
        'rate_limited',
        'Too many concurrent waits for this app’s tenant; retry after 1 s.',
        'wait_tenant',
      );
    if (this.total >= this.limits.perProcess)
      throw tooMany(
        503,
        'temporarily_unavailable',
        'This server holds as many waits as it takes; retry after 1 s (or read without wait_for).',
        'wait_process',
      );
    const w: Waiter = { tenantId, keys: new Set(), seen: null, pending: false, wake: null };
    this.keyBy(w, key);
    this.perUser.set(key, (this.perUser.get(key) ?? 0) + 1);
    this.perTenant.set(tenantId, (this.perTenant.get(tenantId) ?? 0) + 1);
    this.perAddress.set(addressKey, (this.perAddress.get(addressKey) ?? 0) + 1);
    this.total++;
    let left = false;
    return {
      next: (ms, signal) => {
        if (this.stopped || signal.aborted) return Promise.resolve(signal.aborted ? 'aborted' : 'timeout');
        if (w.pending) {
          w.pending = false;
          return Promise.resolve('changed');
        }
        return new Promise<WaitOutcome>((resolve) => {
          const done = (o: WaitOutcome) => {
            clearTimeout(timer);
            signal.removeEventListener('abort', onAbort);
            w.wake = null;
            resolve(o);
          };
          const onAbort = () => done('aborted');
          const timer = setTimeout(() => done('timeout'), Math.max(0, ms));
          signal.addEventListener('abort', onAbort, { once: true });
          w.wake = done;
        });
      },
      reading: () => {
        if (left) return;
        w.seen = new Set();
        const set = this.reading.get(tenantId);
        if (set) set.add(w);
        else this.reading.set(tenantId, new Set([w]));
      },
      follow: (appUserIds) => {
        if (left) return;
        const seen = w.seen;
        this.stopReading(w);
        const keys = new Set([key, ...appUserIds.map((id) => `${tenantId}:${subscriberHash(tenantId, id)}`)]);
        for (const k of w.keys) if (!keys.has(k)) this.unkey(w, k);
        for (const k of keys) {
          if (w.keys.has(k)) continue;
          this.keyBy(w, k);
          // Notified while the read was under way, under an id the waiter did not follow then: that write may be
          // newer than what the read saw, so the next `next()` answers at once and the caller looks again.
          if (seen?.has(k.slice(tenantId.length + 1))) w.pending = true;
        }
      },
      leave: () => {
        if (left) return;
        left = true;
        for (const k of [...w.keys]) this.unkey(w, k);
        this.stopReading(w);
        const u = (this.perUser.get(key) ?? 1) - 1;
        if (u > 0) this.perUser.set(key, u);
        else this.perUser.delete(key);
        const n = (this.perTenant.get(tenantId) ?? 1) - 1;
        if (n > 0) this.perTenant.set(tenantId, n);
        else this.perTenant.delete(tenantId);
        const a = (this.perAddress.get(addressKey) ?? 1) - 1;
        if (a > 0) this.perAddress.set(addressKey, a);
        else this.perAddress.delete(addressKey);
        this.total--;
      },
    };
  }

  /** A notification: wake this tenant's waiters of that app user's customer (and no one else). */
  changed(tenantId: string, hash: string): void {
    const reading = this.reading.get(tenantId);
    if (reading) for (const w of reading) w.seen?.add(hash);
    const set = this.byKey.get(`${tenantId}:${hash}`);
    if (!set) return;
    for (const w of set) this.wake(w, 'changed');
  }

  private keyBy(w: Waiter, key: string): void {
    w.keys.add(key);
    const set = this.byKey.get(key);
    if (set) set.add(w);
    else this.byKey.set(key, new Set([w]));
  }

  private unkey(w: Waiter, key: string): void {
    w.keys.delete(key);
    const set = this.byKey.get(key);
    set?.delete(w);
    if (set && set.size === 0) this.byKey.delete(key);
  }

  private stopReading(w: Waiter): void {
    w.seen = null;
    const set = this.reading.get(w.tenantId);
    set?.delete(w);
    if (set && set.size === 0) this.reading.delete(w.tenantId);
  }

  /** Notifications may have been lost (the listening session dropped): everyone looks again. */
  resync(): void {
    for (const w of this.waiters()) this.wake(w, 'changed');
  }

  /** Answer every waiter now (shutdown): each re-reads and answers what is true. */
  stop(): void {
    this.stopped = true;
    for (const w of this.waiters()) this.wake(w, 'timeout');
  }

  /** What is held, for /readyz-style checks and tests: waiting now and wake-ups delivered, per tenant or in all. */
  stats(tenantId?: string): { waiting: number; wakeups: number } {
    if (tenantId) return { waiting: this.perTenant.get(tenantId) ?? 0, wakeups: this.wakeups.get(tenantId) ?? 0 };
    return { waiting: this.total, wakeups: [...this.wakeups.values()].reduce((a, b) => a + b, 0) };
  }

  /** Each waiter once (one following several ids is under several keys). */
  private waiters(): Set<Waiter> {
    const all = new Set<Waiter>();
    for (const set of this.byKey.values()) for (const w of set) all.add(w);
    return all;
  }

  private wake(w: Waiter, o: WaitOutcome): void {
    this.wakeups.set(w.tenantId, (this.wakeups.get(w.tenantId) ?? 0) + 1);
    if (w.wake) w.wake(o);
    else if (o === 'changed') w.pending = true;
  }
}

const tooMany = (status: 429 | 503, code: string, detail: string, limit: string) => {
  clientRateRefusals.inc({ limit });
  return new ApiError(status, code, detail, {}, { 'Retry-After': '1' });
};

interface Running {
  waits: EntitlementWaits;
  listener: EntitlementListener;
}
const running = new WeakMap<Services, Running>();
/** Every registry of this process, for the gauge (one in production; tests start several). */
const registries = new Set<EntitlementWaits>();
new Gauge({
  name: 'billing_sdk_waits_held',
  help: `wait_for=premium requests held open by this process (at most ${WAIT_LIMITS.perProcess}; per tenant ${WAIT_LIMITS.perTenant}, per client address ${WAIT_LIMITS.perAddress}).`,
  registers: [registry],
  collect() {
    let n = 0;
    for (const w of registries) n += w.stats().waiting;
    this.set(n);
  },
});
const BOOT_WAIT_MS = 5_000;

/**
 * Start the process's listener and waiter registry: every api process does at boot
 * (api/main.ts), not on the first wait. Idempotent; resolves once the LISTEN is in place, or
 * after BOOT_WAIT_MS when Postgres does not answer: the process still comes up (its /readyz says
 * why), the listener keeps reconnecting, and waits re-read when it does and at their timeout.
 */
export async function startEntitlementWaits(
  services: Services,
  limits?: Partial<WaitLimits>,
): Promise<EntitlementWaits> {
  let r = running.get(services);
  if (!r) {
    // Half the listener's connection cap, when it was lowered below the default's double.
    const cap = Math.floor((services.config.httpLimits?.maxConnections ?? 2 * WAIT_LIMITS.perProcess) / 2);
    const waits = new EntitlementWaits({
      ...WAIT_LIMITS,
      perProcess: Math.max(1, Math.min(WAIT_LIMITS.perProcess, cap)),
      ...limits,
    });
    const listener = listenForEntitlementChanges(services.db, {
      onChange: (tenantId, hash) => waits.changed(tenantId, hash),
      onResync: () => waits.resync(),
      onError: (err) => logger.warn({ err: String(err) }, 'entitlement listener lost its session; reconnecting'),
    });
    r = { waits, listener };
    running.set(services, r);
    registries.add(waits);
  }
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), BOOT_WAIT_MS)));
  if (await Promise.race([r.listener.ready.then(() => false), late]))
    logger.warn({ waited_ms: BOOT_WAIT_MS }, 'entitlement listener not connected yet; starting without it');
  clearTimeout(timer);
  return r.waits;
}

/** The process's registry, when it started one. */
export function entitlementWaits(services: Services): EntitlementWaits | undefined {
  return running.get(services)?.waits;
}

/** The listening session's backend pid (tests end it to prove the listener comes back). */
export function entitlementListenerPid(services: Services): number | null {
  return running.get(services)?.listener.pid() ?? null;
}

export async function stopEntitlementWaits(services: Services): Promise<void> {
  const r = running.get(services);
  if (!r) return;
  running.delete(services);
  registries.delete(r.waits);
  r.waits.stop();
  await r.listener.stop();
}
