import crypto from 'node:crypto';
import type { Knex } from 'knex';
import pg from 'pg';
import { logger } from '../runtime/logger';

/**
 * "This app user's entitlements changed", across processes: Postgres LISTEN/NOTIFY on one
 * channel, to every replica's listener. A write that changes an entitlement asks for the
 * notification in its tenant transaction (`notifyEntitlementChanged`); it is sent after that
 * transaction commits, in a statement of its own that writes nothing (`withTenant`,
 * db/tenant-tx.ts), and dropped with a rollback. So a woken waiter reads the committed row, and
 * no writing commit holds Postgres's notify lock: that lock is one for the whole server, held
 * from a notifying transaction's pre-commit through its WAL flush, so notifying inside the write
 * made every entitlement-writing commit of the server wait for the one before (bench/RESULTS.md,
 * "Sustained webhook ingest"). The payload is `<tenant id>:<subscriber hash>`, never the app user
 * id itself (it may be an email): listeners compare hashes.
 */
export const ENTITLEMENT_CHANNEL = 'entitlement_changed';

/** The app user as the notification names them: sha256 of `<tenant>:<app user>`, hex. */
export function subscriberHash(tenantId: string, appUserId: string): string {
  return crypto.createHash('sha256').update(`${tenantId.toLowerCase()}:${appUserId}`, 'utf8').digest('hex');
}

export function entitlementPayload(tenantId: string, appUserId: string): string {
  return `${tenantId.toLowerCase()}:${subscriberHash(tenantId, appUserId)}`;
}

/** The payloads each open `withTenant` transaction asked for, to send once it has committed. */
const afterCommit = new WeakMap<Knex.Transaction, Set<string>>();

/**
 * The app users' waiters are to be woken when `trx` commits, never if it rolls back. In a transaction
 * `withTenant` opened, collected and sent after its commit (`sendCollected`); in any other (a savepoint, a
 * transaction of its own), notified in it: Postgres delivers it at the commit, at the price of its notify lock.
 */
export async function notifyEntitlementChanged(
  trx: Knex.Transaction,
  tenantId: string,
  appUserIds: Iterable<string>,
): Promise<void> {
  const payloads = new Set([...appUserIds].map((u) => entitlementPayload(tenantId, u)));
  const pending = afterCommit.get(trx);
  if (pending) for (const p of payloads) pending.add(p);
  else if (payloads.size) await trx.raw(NOTIFY_SQL, [ENTITLEMENT_CHANNEL, [...payloads]]);
}

const NOTIFY_SQL = 'select pg_notify(?, p) from unnest(?::text[]) as p';

/** `trx` (just opened by withTenant) collects its notifications: the set `sendCollected` takes after the commit. */
export function collectNotifications(trx: Knex.Transaction): Set<string> {
  const pending = new Set<string>();
  afterCommit.set(trx, pending);
  return pending;
}

/**
 * Sends a committed transaction's notifications, outside any transaction. A failure is logged and
 * swallowed: the write is committed, and a held `wait_for=premium` read re-reads at its timeout.
 */
export async function sendCollected(db: Knex, payloads: Set<string>): Promise<void> {
  if (!payloads.size) return;
  await db.raw(NOTIFY_SQL, [ENTITLEMENT_CHANNEL, [...payloads]]).catch((err: Error) => {
    logger.warn({ err: { message: err.message }, notifications: payloads.size }, 'entitlement change not notified');
  });
}

/**
 * Notify outside any transaction, for a change already committed (the webhook receipt's grant): the same
 * statement as `sendCollected`, which writes nothing, so it takes Postgres's notify lock without a WAL flush under it.
 */
export async function notifyAfterCommit(db: Knex, tenantId: string, appUserId: string): Promise<void> {
  await sendCollected(db, new Set([entitlementPayload(tenantId, appUserId)]));
}

export interface EntitlementListener {
  /** Resolves once the first LISTEN is in place. */
  ready: Promise<void>;
  /** The backend pid of the current listening session (tests terminate it to prove reconnection). */
  pid(): number | null;
  stop(): Promise<void>;
}

export interface ListenHandlers {
  onChange(tenantId: string, hash: string): void;
  /**
   * The session was lost and is back: notifications sent meanwhile are gone, so every waiter
   * must look again.
   */
  onResync(): void;
  onError?(err: unknown): void;
}

const RECONNECT_MS = [100, 250, 500, 1000, 2000, 5000];

/**
 * One dedicated session per process (not a pool connection: a LISTEN must stay on one session),
 * with the pool's own connection settings. Lost sessions reconnect with back-off; on each
 * reconnect `onResync` runs.
 */
export function listenForEntitlementChanges(
  db: Knex,
  handlers: ListenHandlers,
  applicationName = 'billing-entitlement-listener',
): EntitlementListener {
  const settings = (db.client as { connectionSettings: pg.ClientConfig | string }).connectionSettings;
  // knex keeps the password as a non-enumerable property (so it never prints): a spread drops it.
  const base: pg.ClientConfig =
    typeof settings === 'string' ? { connectionString: settings } : { ...settings, password: settings.password };
  let client: pg.Client | null = null;
  let currentPid: number | null = null;
  let stopped = false;
  let attempt = 0;
  let timer: NodeJS.Timeout | null = null;
  let markReady!: () => void;
  const ready = new Promise<void>((r) => (markReady = r));

  const connect = async () => {
    if (stopped) return;
    // Bounded: a connect that hangs would otherwise hold the listener (and the boot) forever.
    const c = new pg.Client({ ...base, application_name: applicationName, connectionTimeoutMillis: 10_000 });
    client = c;
    c.on('notification', (msg) => {
      if (msg.channel !== ENTITLEMENT_CHANNEL || !msg.payload) return;
      const i = msg.payload.indexOf(':');
      if (i > 0) handlers.onChange(msg.payload.slice(0, i), msg.payload.slice(i + 1));
    });
    const lost = (err?: unknown) => {
      if (client !== c) return;
      client = null;
      currentPid = null;
      if (err) handlers.onError?.(err);
      c.removeAllListeners('notification');
      c.end().catch(() => undefined);
      if (stopped) return;
      // Whatever was notified while we were away is lost: every waiter looks again now and on reconnect.
      handlers.onResync();
      timer = setTimeout(() => void connect(), RECONNECT_MS[Math.min(attempt++, RECONNECT_MS.length - 1)]);
    };
    c.on('error', lost);
    c.on('end', () => lost());
    try {
      await c.connect();
      await c.query(`LISTEN ${ENTITLEMENT_CHANNEL}`);
      const { rows } = await c.query('select pg_backend_pid() as pid');
      currentPid = rows[0].pid;
      attempt = 0;
      // Waits taken before this session listened (a late first connect included) look again now.
      handlers.onResync();
      markReady();
    } catch (err) {
      lost(err);
    }
  };
  void connect();

  return {
    ready,
    pid: () => currentPid,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      const c = client;
      client = null;
      markReady();
      await c?.end().catch(() => undefined);
    },
  };
}
