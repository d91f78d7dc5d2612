/**
 * Payment to premium: from the psp_a emulator's checkout (it sends `payment_intent.succeeded`,
 * then `customer.subscription.created`, then `invoice.payment_succeeded`, each signed and each
 * waiting for our answer, as Stripe does) to the first `is_premium: true` at
 * `GET /v1/sdk/subscribers/{app_user_id}` — what the app sees, provisional access counted, asked
 * from the moment of payment as the SDK's `checkout({ waitForPremium })` does, or once the
 * checkout's events are all answered (`--ask-from`; by default alternate purchases each) — and,
 * beside it, to the authoritative confirmation (the entitlement row the customer's workflow
 * writes). Open loop: a purchase is due every 1/rate s whatever the service does; latency counts
 * from when it was due.
 *
 * Where the time goes comes from clocks the system already keeps, all on this machine: the
 * delivery rows' created_at and premium_at (Postgres), the customer workflow's history (signal,
 * workflow task, write; stamped by Temporal) and the bench's own clock for the checkout's answer
 * and the SDK's.
 *
 * `--pause-temporal-seconds N`: the bench SIGSTOPs the Temporal dev server it started itself (never
 * another) for the N s of purchases, measures premium while it is stopped, SIGCONTs it, and checks
 * that every purchase is confirmed and the backlog drains (and how long that takes).
 *
 *   DATABASE_URL=… npx tsx bench/payment-to-premium.ts [--rates 20,50] [--seconds 30] [--poll-ms 20]
 *       [--premium-concurrency 32] [--premium-timeout-s 60] [--confirm-timeout-s 600]
 *       [--ask-from both|payment|checkout] [--warm-seconds 4] [--warm-rate 5]
 *   DATABASE_URL=… npx tsx bench/payment-to-premium.ts --pause-temporal-seconds 30 [--rates 10]
 */
import os from 'node:os';
import http from 'node:http';
import { defaultPayloadConverter } from '@temporalio/common';
import { decodeHistory } from '../temporal/history-payloads';
import { machine, table, f0, f1 } from './lib/report';
import {
  cpuPhase,
  quantile,
  startWebhookStack,
  storedDeliveries,
  writeResults,
  type WebhookStack,
} from './lib/webhook-stack';
import { runBench } from './lib/run';
import { emulatorCheckout, keepSdkBucketsFull } from './lib/checkouts';
import { threadWindow } from './lib/cpu';
import { atInterrupt } from './lib/proc';
import { lifecycleWorkflowId } from '../temporal/workflow-starts';
import { arg } from './lib/args';
import { statisticsLine } from './lib/autovacuum-stand-in';

/** Temporal-paused mode: the bench SIGSTOPs its own dev server for this long while purchases run (0: off). */
const PAUSE_S = Number(arg('pause-temporal-seconds', '0'));
const RATES = arg('rates', PAUSE_S ? '10' : '20,50')
  .split(',')
  .map(Number);
const SECONDS = PAUSE_S || Number(arg('seconds', '30'));
const POLL_MS = Number(arg('poll-ms', '20'));
/** SDK reads in flight at once (plain reads; held `wait_for=premium` reads have a bound of their own). */
const PREMIUM_CONCURRENCY = Number(arg('premium-concurrency', '32'));
/** A purchase not premium at the SDK within this long is counted as such and no longer asked about. */
const PREMIUM_TIMEOUT_MS = Number(arg('premium-timeout-s', '60')) * 1000;
/** How long the bench waits for the authoritative confirmations (and, paused, the backlog) before it reports what is missing. */
const CONFIRM_TIMEOUT_MS = Number(arg('confirm-timeout-s', '600')) * 1000;
const HELD_WAIT_MS = 2000;
/**
 * The warm-up before anything is measured: the api's and workers' first requests load code, fill pools and
 * run in V8's lower tiers. The default (5 purchases/s for 4 s) is what every earlier run used; a longer
 * one (`--warm-seconds 30 --warm-rate 20`) measures the processes as a running installation has them,
 * their hot code compiled (bench/RESULTS.md, "CPU per purchase once warm").
 */
const WARM_DEFAULT = { seconds: 4, rate: 5 };
const WARM_SECONDS = Number(arg('warm-seconds', String(WARM_DEFAULT.seconds)));
const WARM_RATE = Number(arg('warm-rate', String(WARM_DEFAULT.rate)));
/**
 * When the app starts asking. `payment`: as the SDK's `checkout({ waitForPremium })` does, the app's
 * held read (`wait_for=premium`) leaves when the payment is made, while the provider's webhooks are
 * still on their way. `checkout`: a plain read once the provider's three events have all been
 * answered (the stricter instrument of earlier runs). `both` (the default): purchases alternate
 * between the two, so both are measured under the same load in one run.
 */
const ASK_FROM = arg('ask-from', 'both');
if (!['payment', 'checkout', 'both'].includes(ASK_FROM))
  throw new Error('--ask-from must be payment, checkout or both');
type Instrument = 'payment' | 'checkout';
const INSTRUMENTS: Instrument[] = ASK_FROM === 'both' ? ['payment', 'checkout'] : [ASK_FROM as Instrument];
const INSTRUMENT_LABEL: Record<Instrument, string> = {
  payment: "app waits from the payment (the SDK's checkout with waitForPremium)",
  checkout: 'app reads once the checkout has answered',
};
const log = (m: string) => console.log(`[premium] ${m}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Purchase {
  user: string;
  /** When this purchase's app starts asking (ASK_FROM). */
  askFrom: Instrument;
  due: number;
  /** Wall clock (ms since epoch) when the checkout was due: every stage below is on this clock. */
  dueWall: number;
  checkoutDone?: number;
  /** An event of the checkout still not answered 200 after the provider's redeliveries gave up. */
  refused?: boolean;
  /** The checkout call failed (emulator error, timeout): the purchase has no events. */
  checkoutFailed?: string;
  /** The first SDK answer `is_premium: true` (provisional access counted): what the app sees. */
  premiumAt?: number;
  /** When the first SDK read left the bench (after the bench's own bound on reads in flight). */
  premiumAsked?: number;
  /** SDK reads this purchase took (plain and held). */
  premiumReads?: number;
  /** Redeliveries the provider made after a non-200. */
  retries?: number;
  /** The first answer to each of the three events. */
  firstStatuses?: number[];
  /** When the bench's watcher first saw the authoritative entitlement row active (the workflow's write, committed). */
  confirmed?: number;
  statuses?: number[];
  customer?: string;
  events?: { id: string; type: string }[];
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
function getJson(
  url: string,
  headers: Record<string, string>,
  timeoutMs = 30_000,
): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        try {
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString() || 'null') });
        } catch (e) {
          reject(e);
        }
      });
      res.on('error', reject);
    });
    // Bounded: an answer that never comes is an error, asked again, never a hung run.
    req.setTimeout(timeoutMs, () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

/** At most `n` calls at once; the rest queue in order. */
function limiter(n: number) {
  let active = 0;
  const queue: (() => void)[] = [];
  return async <T>(f: () => Promise<T>): Promise<T> => {
    if (active >= n) await new Promise<void>((r) => queue.push(r));
    else active++;
    try {
      return await f();
    } finally {
      // The slot passes to the next in line (it does not count itself again), else it is freed.
      const next = queue.shift();
      if (next) next();
      else active--;
    }
  };
}

interface RunOptions {
  seconds?: number;
  /** Runs once every purchase has its premium answer (or gave up), before the bench waits for confirmations. */
  afterPremium?: () => Promise<void>;
}

async function runRate(stack: WebhookStack, rate: number, tag: string, o: RunOptions = {}): Promise<Purchase[]> {
  const seconds = o.seconds ?? SECONDS;
  const total = Math.round(rate * seconds);
  const purchases: Purchase[] = [];
  const t0 = performance.now();
  const wall0 = Date.now();
  // The SDK endpoint is rate-limited per tenant; the poller is the benchmark's instrument, not an app.
  const stopRefill = keepSdkBucketsFull(stack);
  const plainRead = limiter(PREMIUM_CONCURRENCY);
  // Held reads: the api bounds waiters per client address (25); the bench stays under it.
  const heldRead = limiter(20);
  const sdk = (user: string, wait: boolean) =>
    getJson(
      `${stack.apiRoot}/v1/sdk/subscribers/${user}${wait ? `?wait_for=premium&timeout_ms=${HELD_WAIT_MS}` : ''}`,
      { authorization: `Bearer ${stack.tenant.publishable_key}` },
      // A kept-alive connection the api closed as it was reused (ECONNRESET) is the bench's, not an answer: ask again.
    ).catch(() => ({ status: 0, body: null }));
  /**
   * The app's view until premium or PREMIUM_TIMEOUT_MS. From the payment, as the SDK's
   * `checkout({ waitForPremium })`: held reads (`wait_for=premium`: answered at once when premium,
   * else woken by the commit that makes the user premium), alongside the provider's webhooks. After
   * the checkout: a plain read first, then held reads if not premium. Either costs one request per
   * purchase when the receipt has already granted, so the instrument does not load the machine it
   * measures.
   */
  const askPremium = async (p: Purchase) => {
    for (let first = true; ; first = false) {
      const r =
        first && p.askFrom === 'checkout'
          ? await plainRead(() => {
              p.premiumAsked = performance.now();
              return sdk(p.user, false);
            })
          : await heldRead(() => {
              p.premiumAsked ??= performance.now();
              return sdk(p.user, true);
            });
      p.premiumReads = (p.premiumReads ?? 0) + 1;
      if (r.status === 200 && r.body?.is_premium === true) {
        p.premiumAt = performance.now();
        return;
      }
      if (performance.now() - p.due > PREMIUM_TIMEOUT_MS) return;
      // A refusal (429, 5xx, reset) is asked again after a short pause, not at once.
      if (r.status !== 200) await sleep(Math.max(POLL_MS, 200));
    }
  };
  const one = async (p: Purchase) => {
    const wait = p.due - performance.now();
    if (wait > 0) await sleep(wait);
    // Watched from the moment it is sent: its entitlement may commit before the checkout call returns.
    waiting.set(p.user, p);
    // The app that waits from the payment starts now, beside the provider's webhooks.
    const app = p.askFrom === 'payment' ? askPremium(p) : null;
    if ((await checkout(p)) && !app) await askPremium(p);
    await app;
  };
  /** The provider's side of a purchase: its three events, redelivered until answered 200. False: no write can confirm it. */
  const checkout = async (p: Purchase): Promise<boolean> => {
    let c: { customer_id: string; events: { id: string; type: string; status: number }[] };
    try {
      const res = await emulatorCheckout(stack, p.user, { signal: AbortSignal.timeout(120_000) });
      c = (await res.json()) as typeof c;
    } catch (e) {
      p.checkoutFailed = (e as Error).message;
      waiting.delete(p.user);
      return false;
    }
    p.checkoutDone = performance.now();
    p.customer = c.customer_id;
    p.events = c.events.map((e) => ({ id: e.id, type: e.type }));
    p.statuses = c.events.map((e) => e.status);
    p.firstStatuses = [...p.statuses];
    // The provider's retries: an event answered other than 200 is sent again (same id, same
    // body) until it is; Stripe backs off over hours, this bench after 1 s.
    for (const [k, e] of c.events.entries()) {
      let status = e.status;
      while (status !== 200 && performance.now() - p.due < PREMIUM_TIMEOUT_MS) {
        await sleep(1000);
        const again = await fetch(`${stack.emulators.psp_a.url}/__control/events`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ id: e.id, type: e.type, target: stack.webhookUrl, account: stack.account }),
          signal: AbortSignal.timeout(60_000),
        })
          .then(async (r) => ((await r.json()) as { status: number }).status)
          .catch(() => 0);
        status = again;
        p.retries = (p.retries ?? 0) + 1;
        p.statuses[k] = status;
      }
    }
    // An event still refused after PREMIUM_TIMEOUT_MS of redeliveries: no write can confirm this
    // purchase, so the run does not wait CONFIRM_TIMEOUT_MS for it (it is counted as refused).
    if (p.statuses.some((x) => x !== 200)) {
      p.refused = true;
      waiting.delete(p.user);
      return false;
    }
    return true;
  };
  // The authoritative confirmation: one watcher for every purchase (a poller per purchase would
  // load the machine more than the service does) reads which app users' entitlement rows the
  // workflows have written active since its last look. A row is visible only once committed, so
  // this is the commit time + one interval (POLL_MS, longer while many are waiting: a backlog).
  const waiting = new Map<string, Purchase>();
  let watching = true;
  const watcher = (async () => {
    while (watching) {
      // Asked by user, not by updated_at: that is the transaction's start, and a transaction that
      // started earlier can commit later.
      const pending = [...waiting.keys()];
      const rows: { app_user_id: string }[] = pending.length
        ? await stack
            .db('entitlements')
            // By the tenant too: the lookup is then an index probe, not a scan of every row (the bench's own cost).
            .where({ tenant_id: stack.tenant.tenant_id })
            .whereIn('app_user_id', pending)
            .where({ state: 'active' })
            .select('app_user_id')
            // A read the loaded machine timed out is tried again at the next look.
            .catch(() => [])
        : [];
      const now = performance.now();
      for (const r of rows) {
        const p = waiting.get(r.app_user_id);
        if (!p) continue;
        p.confirmed = now;
        waiting.delete(p.user);
      }
      await sleep(Math.max(POLL_MS, Math.min(500, pending.length / 5)));
    }
  })();
  const runs: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = t0 + (i * 1000) / rate;
    const p: Purchase = {
      user: `${tag}_${i}`,
      askFrom: INSTRUMENTS[i % INSTRUMENTS.length],
      due,
      dueWall: wall0 + (due - t0),
    };
    purchases.push(p);
    runs.push(one(p));
  }
  try {
    await Promise.all(runs);
    await o.afterPremium?.();
    // Every confirmation, or what is missing at the bound.
    const deadline = performance.now() + CONFIRM_TIMEOUT_MS;
    while (waiting.size && performance.now() < deadline) await sleep(100);
  } finally {
    watching = false;
    await watcher;
    stopRefill();
  }
  return purchases;
}

interface Stages {
  /** Emulator → receiver: the payment intent's row inserted (received, verified). */
  piStored: number;
  /** Its hand-over: Temporal has the payment intent's signal (signal-with-start: the workflow starts). */
  piSignalled: number;
  /** The receiver's 200 reaches the emulator, which sends subscription.created; its row inserted. */
  subStored: number;
  /** Hand-over of subscription.created (signal to the now running workflow). */
  subSignalled: number;
  /** The worker picks up the workflow task the signal scheduled. */
  taskStarted: number;
  /** Temporal records the write done (the workflow task with the local activity completes). */
  reported: number;
  /** The authoritative entitlement row seen active by the bench's watcher (committed; within one watcher interval). */
  confirmed: number;
  /** The first receipt grant of provisional access committed (the delivery's premium_at; null: none granted). */
  granted: number | null;
  /** Which event's receipt granted first. */
  grantedBy: string | null;
  /** The checkout's three events all answered (200 or retried to 200). */
  checkoutDone: number;
  /** The first SDK read sent (the bench's bound on reads in flight passed). */
  asked: number;
  /** The SDK answers premium (GET /v1/sdk/subscribers, provisional access counted). */
  seen: number;
  /** What the customer's workflow cost Temporal for this checkout (its whole history: one checkout per customer). */
  engine: EngineCost;
}

/** Temporal's own count of the work one checkout made, read from the customer workflow's history. */
interface EngineCost {
  signals: number;
  workflowTasks: number;
  localActivities: number;
  activities: number;
  timersStarted: number;
  timersCanceled: number;
  historyEvents: number;
}

function engineCost(events: { [k: string]: any }[]): EngineCost {
  const n = (attr: string) => events.filter((e) => !!e[attr]).length;
  return {
    signals: n('workflowExecutionSignaledEventAttributes'),
    workflowTasks: n('workflowTaskCompletedEventAttributes'),
    localActivities: n('markerRecordedEventAttributes'),
    activities: n('activityTaskScheduledEventAttributes'),
    timersStarted: n('timerStartedEventAttributes'),
    timersCanceled: n('timerCanceledEventAttributes'),
    historyEvents: events.length,
  };
}

const tsMs = (t: any): number => Number(t.seconds) * 1000 + Math.floor(Number(t.nanos ?? 0) / 1e6);

/** Stage boundaries (wall ms) for one purchase, from the delivery rows and the workflow's history. */
async function stagesOf(stack: WebhookStack, p: Purchase, perfToWall: (t: number) => number): Promise<Stages | null> {
  if (!p.premiumAt || !p.confirmed || !p.checkoutDone || !p.events || !p.customer) return null;
  const [pi, sub] = p.events;
  const rows: { event_id: string; event_type: string; created_at: Date; premium_at: Date | null }[] = await stack
    .db('webhook_deliveries')
    .whereIn(
      'event_id',
      p.events.map((e) => e.id),
    )
    .select('event_id', 'event_type', 'created_at', 'premium_at');
  const created = new Map(rows.map((r) => [r.event_id, r.created_at.getTime()]));
  const grant = rows.filter((r) => r.premium_at).sort((a, b) => a.premium_at!.getTime() - b.premium_at!.getTime())[0];
  // Fetched as stored: the signal payloads are ciphertext until decoded.
  const workflowId = lifecycleWorkflowId(stack.tenant.tenant_id, 'psp_a', p.customer);
  const history = await decodeHistory(await stack.client.workflow.getHandle(workflowId).fetchHistory(), stack.codec, {
    namespace: stack.client.options.namespace,
    workflowId,
  });
  const events = history.events ?? [];
  const signalOf = (id: string) =>
    events.find((e) => {
      if (!e.workflowExecutionSignaledEventAttributes) return false;
      // The outbox dispatcher's 'handover' signal: a batch of one customer's events, naming their tenant.
      const arg = defaultPayloadConverter.fromPayload(
        e.workflowExecutionSignaledEventAttributes.input!.payloads![0],
      ) as { events: { id: string }[] };
      return arg.events.some((x) => x.id === id);
    });
  const piSig = signalOf(pi.id);
  const subSig = signalOf(sub.id);
  if (!piSig || !subSig) return null;
  const subSigId = Number(subSig.eventId);
  const after = (pred: (e: (typeof events)[number]) => boolean, from = subSigId) =>
    events.find((e) => Number(e.eventId) > from && pred(e));
  // The first workflow task the worker ran after the signal.
  const wft = after((e) => !!e.workflowTaskStartedEventAttributes);
  if (!wft) return null;
  // The write it made: a local activity (a marker, recorded when that workflow task completed) or,
  // in histories from before the change, an activity task completed later.
  const marker = after((e) => !!e.markerRecordedEventAttributes, Number(wft.eventId));
  const sched = after((e) => !!e.activityTaskScheduledEventAttributes, Number(wft.eventId));
  let reported: number;
  if (marker && (!sched || Number(marker.eventId) < Number(sched.eventId))) {
    const done = events.find(
      (e) =>
        e.workflowTaskCompletedEventAttributes &&
        Number(e.workflowTaskCompletedEventAttributes.startedEventId) === Number(wft.eventId),
    );
    if (!done) return null;
    reported = tsMs(done.eventTime);
  } else if (sched) {
    const completed = events.find(
      (e) =>
        e.activityTaskCompletedEventAttributes &&
        Number(e.activityTaskCompletedEventAttributes.scheduledEventId) === Number(sched.eventId),
    );
    if (!completed) return null;
    reported = tsMs(completed.eventTime);
  } else return null;
  return {
    piStored: created.get(pi.id)!,
    piSignalled: tsMs(piSig.eventTime),
    subStored: created.get(sub.id)!,
    subSignalled: tsMs(subSig.eventTime),
    taskStarted: tsMs(wft.eventTime),
    reported,
    confirmed: perfToWall(p.confirmed),
    granted: grant ? grant.premium_at!.getTime() : null,
    grantedBy: grant ? grant.event_type : null,
    checkoutDone: perfToWall(p.checkoutDone),
    asked: perfToWall(p.premiumAsked ?? p.checkoutDone),
    seen: perfToWall(p.premiumAt),
    engine: engineCost(events),
  };
}

/** Stored events not yet processed, and outbox rows not yet handed to Temporal (the scratch database holds the bench's tenant only). */
async function backlogNow(stack: WebhookStack): Promise<{ deliveries: number; outbox: number; failed: number }> {
  const d = (await stack
    .db('webhook_deliveries')
    .select(
      stack.db.raw(`count(*) filter (where status = 'received')::int as deliveries`),
      stack.db.raw(`count(*) filter (where status = 'failed')::int as failed`),
    )
    .first()) as { deliveries: number; failed: number };
  const o = Number((await stack.db('webhook_outbox').count('* as n'))[0].n);
  return { deliveries: d.deliveries, outbox: o, failed: d.failed };
}

/** Lost: an event answered 200 (first time or on a redelivery) that has no delivery row. `ids`: every event sent. */
async function lostOf(stack: WebhookStack, ps: Purchase[]): Promise<{ ids: number; lost: number }> {
  const sent = ps.reduce((k, p) => k + (p.events?.length ?? 0), 0);
  const ids = ps.flatMap((p) => p.events?.filter((_, k) => p.statuses?.[k] === 200).map((e) => e.id) ?? []);
  const stored = await storedDeliveries(stack, ids);
  return { ids: sent, lost: ids.length - stored };
}

const pct = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { p50: quantile(s, 0.5), p90: quantile(s, 0.9), p99: quantile(s, 0.99), max: s.at(-1) ?? NaN };
};

async function main() {
  const startedAt = Date.now();
  const m0 = machine('');
  const stack = await startWebhookStack(log);
  // The dev server this bench started (never another): the only process the paused mode stops.
  const temporalPid = stack.temporal.process.pid!;
  let paused = false;
  const resume = () => {
    if (!paused) return;
    paused = false;
    try {
      process.kill(temporalPid, 'SIGCONT');
    } catch {
      // Already gone.
    }
  };
  // A stopped dev server acts on no SIGTERM: whatever ends the bench, the server is continued first.
  process.on('exit', resume);
  const unhook = atInterrupt(async () => resume());
  const sections: string[] = [];
  const summary: (string | number)[][] = [];
  const aims: string[] = [];
  const stageRows: (string | number)[][] = [];
  const grantRows: (string | number)[][] = [];
  const cpuRows: (string | number)[][] = [];
  const engineRows: (string | number)[][] = [];
  const threadRows: (string | number)[][] = [];
  const pausedRows: (string | number)[][] = [];
  try {
    // Warm-up: the api's and worker's first requests load code and fill pools.
    await runRate(stack, WARM_RATE, 'warm', { seconds: WARM_SECONDS });
    // The stack's fixed cost (pollers, sweeps, timers) with nothing to do: CPU ms per second over 10 s, logged.
    {
      const endIdle = await cpuPhase(stack);
      await new Promise((r) => setTimeout(r, 10_000));
      const idle = await endIdle();
      log(
        `idle, CPU ms per second: ${Object.entries(idle.parts)
          .map(([n, ms]) => `${n} ${((1000 * ms) / idle.wallMs).toFixed(1)}`)
          .join(', ')}`,
      );
    }
    const wall0 = Date.now();
    const perf0 = performance.now();
    const perfToWall = (t: number) => wall0 + (t - perf0);
    for (const rate of RATES) {
      const loadBefore = os.loadavg()[0];
      if (PAUSE_S) {
        // Temporal paused: SIGSTOP, purchases for PAUSE_S s, SIGCONT, then everything must be confirmed and drained.
        log(`rate ${rate}/s for ${PAUSE_S} s with the Temporal dev server (pid ${temporalPid}) stopped…`);
        process.kill(temporalPid, 'SIGSTOP');
        paused = true;
        const pausedAt = performance.now();
        let resumedAt = NaN;
        let atResume = { deliveries: 0, outbox: 0, failed: 0 };
        const ps = await runRate(stack, rate, `p${rate}`, {
          seconds: PAUSE_S,
          afterPremium: async () => {
            const left = pausedAt + PAUSE_S * 1000 - performance.now();
            if (left > 0) await sleep(left);
            atResume = await backlogNow(stack);
            resume();
            resumedAt = performance.now();
            log(
              `resumed after ${f0((resumedAt - pausedAt) / 1000)} s: backlog ${atResume.deliveries} events, ${atResume.outbox} outbox rows`,
            );
          },
        });
        // Confirmations are in (or timed out); now the rest of the backlog (the invoices' events).
        const deadline = performance.now() + CONFIRM_TIMEOUT_MS;
        let left = await backlogNow(stack);
        while ((left.deliveries > 0 || left.outbox > 0) && performance.now() < deadline) {
          await sleep(250);
          left = await backlogNow(stack);
        }
        const drained = left.deliveries === 0 && left.outbox === 0;
        const drainS = drained ? (performance.now() - resumedAt) / 1000 : NaN;
        const premium = ps.filter((p) => p.premiumAt !== undefined);
        const whilePaused = premium.filter((p) => p.premiumAt! < resumedAt);
        const prem = pct(whilePaused.map((p) => p.premiumAt! - p.due));
        const confirmed = ps.filter((p) => p.confirmed !== undefined);
        const conf = pct(confirmed.map((p) => p.confirmed! - p.due));
        const lastConfirmS = confirmed.length
          ? (Math.max(...confirmed.map((p) => p.confirmed!)) - resumedAt) / 1000
          : NaN;
        const { ids, lost } = await lostOf(stack, ps);
        const stillProvisional = Number(
          (await stack.db('provisional_access').where({ kind: 'grant', state: 'provisional' }).count('* as n'))[0].n,
        );
        const non200 = ps.filter((p) => p.firstStatuses?.some((x) => x !== 200)).length;
        const failedCheckouts = ps.filter((p) => p.checkoutFailed).length;
        pausedRows.push([
          `${rate}/s`,
          `${ps.length} (${ids} webhooks)`,
          `${whilePaused.length} of ${ps.length}`,
          `${f0(prem.p50)} / ${f0(prem.p90)} / **${f0(prem.p99)}** / ${f0(prem.max)}`,
          `${non200} (${failedCheckouts} checkouts failed, ${ps.filter((p) => p.refused).length} never accepted)`,
          `${atResume.deliveries} / ${atResume.outbox}`,
          `**${confirmed.length} of ${ps.length}**`,
          `${f0(conf.p50)} / ${f0(conf.p99)}`,
          f1(lastConfirmS),
          drained ? f1(drainS) : `not drained (${left.deliveries} / ${left.outbox} left)`,
          `${lost} lost, ${left.failed} failed, ${stillProvisional} grants left`,
          os.loadavg()[0].toFixed(2) + ` (${loadBefore.toFixed(2)} before)`,
        ]);
        const ok = whilePaused.length === ps.length && prem.p99 < 1000;
        const intact = confirmed.length === ps.length && drained && lost === 0 && left.failed === 0;
        aims.push(
          `Temporal paused ${PAUSE_S} s at ${rate}/s: premium p99 ${f0(prem.p99)} ms with every purchase premium while paused (aim < 1 s): ${ok ? '**met**' : '**not met**'}; nothing lost after resume (all confirmed, backlog drained, no failed delivery): ${intact ? '**met**' : '**not met**'}.`,
        );
        log(
          `paused ${rate}/s: premium p99 ${f0(prem.p99)} ms (${whilePaused.length}/${ps.length} while paused), confirmed ${confirmed.length}/${ps.length}, drained in ${f1(drainS)} s after resume`,
        );
        continue;
      }
      log(`rate ${rate}/s for ${SECONDS} s…`);
      const endCpu = await cpuPhase(stack);
      // What the run cost Postgres by table (its statistics, flushed within a second or so): logged, per purchase.
      const pgStats = async () =>
        (
          await stack.db.raw(
            `select relname, coalesce(seq_scan, 0) + coalesce(idx_scan, 0) as scans, n_tup_ins + n_tup_upd + n_tup_del as writes
               from pg_stat_user_tables union all
             select '(transactions)', xact_commit + xact_rollback, 0 from pg_stat_database where datname = current_database()`,
          )
        ).rows as { relname: string; scans: string; writes: string }[];
      const pg0 = new Map((await pgStats()).map((r) => [r.relname, r]));
      const threads = [
        ['api', threadWindow(stack.api.pid)],
        ['worker', threadWindow(stack.worker.pid)],
        ['Temporal dev server', threadWindow(temporalPid)],
      ] as const;
      // The window on the monotonic clock V8 profiles use (BENCH_CPU_PROF_DIR): bench/lib/profile.ts reads it.
      const fromUs = Number(process.hrtime.bigint() / 1000n);
      // CPU counts up to the last confirmation: the authoritative writes are part of each purchase's cost.
      const ps = await runRate(stack, rate, `r${rate}`);
      const cpu = await endCpu();
      await new Promise((r) => setTimeout(r, 1500));
      log(
        `rate ${rate}: Postgres per purchase (scans/writes): ${(await pgStats())
          .map((r) => {
            const b = pg0.get(r.relname);
            const sc = (Number(r.scans) - Number(b?.scans ?? 0)) / ps.length;
            const wr = (Number(r.writes) - Number(b?.writes ?? 0)) / ps.length;
            return { n: r.relname, sc, wr };
          })
          .filter((x) => x.sc + x.wr >= 0.05)
          .sort((a, b) => b.sc + b.wr - a.sc - a.wr)
          .map((x) => `${x.n} ${x.sc.toFixed(2)}/${x.wr.toFixed(2)}`)
          .join(', ')}`,
      );
      log(`rate ${rate}: profile window ${fromUs}-${Number(process.hrtime.bigint() / 1000n)} µs (monotonic)`);
      for (const [proc, end] of threads) {
        const byName = Object.entries(end()).sort((a, b) => b[1] - a[1]);
        // Named threads above 0.3 ms per purchase; the rest summed.
        const big = byName.filter(([, ms]) => ms / ps.length >= 0.3);
        const rest = byName.filter(([, ms]) => ms / ps.length < 0.3).reduce((k, [, ms]) => k + ms, 0);
        threadRows.push([
          `${rate}/s`,
          proc,
          [
            ...big.map(([n, ms]) => `${n} ${(ms / ps.length).toFixed(1)}`),
            `other threads ${(rest / ps.length).toFixed(1)}`,
          ].join(' · '),
        ]);
      }
      const others = cpu.machineBusyMs - Object.values(cpu.parts).reduce((a, b) => a + b, 0);
      let ours = 0;
      for (const [name, ms] of Object.entries(cpu.parts)) if (!name.startsWith('load generator')) ours += ms;
      for (const [name, ms] of [
        ...Object.entries(cpu.parts),
        ['**all our processes** (api, both workers, Temporal, Postgres)', ours] as const,
        ['everything else on the machine (other sessions)', others] as const,
      ]) {
        cpuRows.push([`${rate}/s`, name, (ms / ps.length).toFixed(1), f0((100 * ms) / cpu.wallMs) + '%']);
      }
      const confirmed = ps.filter((p) => p.confirmed !== undefined);
      const conf = pct(confirmed.map((p) => p.confirmed! - p.due));
      const { ids, lost } = await lostOf(stack, ps);
      const left = await backlogNow(stack);
      const verdicts = new Map<Instrument, string>();
      for (const inst of INSTRUMENTS) {
        const mine = ps.filter((p) => p.askFrom === inst);
        const premium = mine.filter((p) => p.premiumAt !== undefined);
        const prem = pct(premium.map((p) => p.premiumAt! - p.due));
        const mineConf = pct(mine.filter((p) => p.confirmed !== undefined).map((p) => p.confirmed! - p.due));
        const reads = mine.reduce((k, p) => k + (p.premiumReads ?? 0), 0) / Math.max(1, mine.length);
        const non200 = mine.filter((p) => p.firstStatuses?.some((x) => x !== 200)).length;
        const retries = mine.reduce((k, p) => k + (p.retries ?? 0), 0);
        const failedCheckouts = mine.filter((p) => p.checkoutFailed).length;
        summary.push([
          `${rate}/s`,
          INSTRUMENT_LABEL[inst],
          `${mine.length}`,
          `${f0(prem.p50)} / ${f0(prem.p90)} / **${f0(prem.p99)}** / ${f0(prem.max)}`,
          `${f0(mineConf.p50)} / **${f0(mineConf.p99)}** / ${f0(mineConf.max)}`,
          reads.toFixed(2),
          `${non200} (${retries} redeliveries, ${failedCheckouts} checkouts failed, ${mine.filter((p) => p.refused).length} never accepted)`,
          mine.length - premium.length,
          mine.length - mine.filter((p) => p.confirmed !== undefined).length,
          os.loadavg()[0].toFixed(2) + ` (${loadBefore.toFixed(2)} before)`,
        ]);
        const aim = rate <= 20 ? 100 : rate <= 50 ? 150 : NaN;
        verdicts.set(
          inst,
          `${INSTRUMENT_LABEL[inst]}: premium p99 ${f0(prem.p99)} ms${Number.isNaN(aim) ? '' : ` (aim < ${aim} ms): ${prem.p99 < aim && premium.length === mine.length ? '**met**' : '**not met**'}`}`,
        );
        log(
          `rate ${rate} (${inst}): premium p50 ${f0(prem.p50)} p99 ${f0(prem.p99)} ms; not premium ${mine.length - premium.length}`,
        );
      }
      aims.push(
        `${rate}/s (${ps.length} purchases, ${ids} webhooks): ${[...verdicts.values()].join('; ')}; authoritative p50 ${f0(conf.p50)} / p99 ${f0(conf.p99)} ms, ${confirmed.length} of ${ps.length} confirmed, ${lost} lost, ${left.failed} failed.`,
      );
      log(
        `rate ${rate}: authoritative p50 ${f0(conf.p50)} p99 ${f0(conf.p99)} ms; not confirmed ${ps.length - confirmed.length}`,
      );

      // Where the time goes: every purchase's stage boundaries, median per stage.
      // Each premium stage belongs to one instrument (its purchases only); the authoritative path is every purchase's.
      type Stage = [string, (s: Stages, d: number) => number | null, Instrument?];
      const premiumStages: Stage[] = [
        [
          `premium, app waits from the payment — the app's held read sent (the bench's queue, ≤ 20 held)`,
          (s, d) => s.asked - d,
          'payment',
        ],
        [
          "premium, app waits from the payment — receipt grant: due → the granting delivery's statement (its premium_at)",
          (s, d) => (s.granted === null ? null : s.granted - d),
          'payment',
        ],
        [
          'premium, app waits from the payment — wake: grant committed → the held read answers is_premium',
          (s) => (s.granted === null ? null : s.seen - s.granted),
          'payment',
        ],
        ['**premium total, app waits from the payment**', (s, d) => s.seen - d, 'payment'],
        [
          'premium, app reads after the checkout — checkout: due → its three events answered 200',
          (s, d) => s.checkoutDone - d,
          'checkout',
        ],
        [
          `premium, app reads after the checkout — the bench's queue: checkout answered → first SDK read sent (≤ ${PREMIUM_CONCURRENCY} in flight)`,
          (s) => s.asked - s.checkoutDone,
          'checkout',
        ],
        [
          'premium, app reads after the checkout — SDK: read sent → GET /v1/sdk/subscribers answers is_premium',
          (s) => s.seen - s.asked,
          'checkout',
        ],
        ['**premium total, app reads after the checkout**', (s, d) => s.seen - d, 'checkout'],
      ];
      const pairs: Stage[] = [
        ...premiumStages.filter(([, , inst]) => !inst || INSTRUMENTS.includes(inst)),
        [
          'authoritative — receive: emulator sends payment_intent.succeeded → its row (and outbox row) inserted',
          (s, d) => s.piStored - d,
        ],
        [
          'authoritative — next event: 200 back, emulator sends customer.subscription.created → its row inserted',
          (s) => s.subStored - s.piStored,
        ],
        [
          'authoritative — hand-over: outbox → dispatcher → signal recorded by Temporal',
          (s) => s.subSignalled - s.subStored,
        ],
        [
          'authoritative — workflow task queue: signal → task started on the worker',
          (s) => s.taskStarted - s.subSignalled,
        ],
        [
          'authoritative — rules + write + commit: task started → entitlement committed (seen by the watcher)',
          (s) => s.confirmed - s.taskStarted,
        ],
        ['**authoritative total** (entitlement row written by the workflow)', (s, d) => s.confirmed - d],
        ["off the path: the payment intent's hand-over (row → its signal recorded)", (s) => s.piSignalled - s.piStored],
        ['off the path: commit → Temporal records the workflow task completed', (s) => s.reported - s.confirmed],
      ];
      // Stage boundaries of every confirmed purchase (history read after the rate's run).
      const matched: { s: Stages; d: number; inst: Instrument }[] = [];
      for (const p of confirmed) {
        const st = await stagesOf(stack, p, perfToWall).catch(() => null);
        if (st) matched.push({ s: st, d: p.dueWall, inst: p.askFrom });
      }
      for (const [name, fn, only] of pairs) {
        const xs = matched
          .filter(({ inst }) => !only || inst === only)
          .map(({ s: st, d }) => fn(st, d))
          .filter((x): x is number => x !== null && Number.isFinite(x))
          .sort((a, b) => a - b);
        stageRows.push([`${rate}/s`, name, f0(quantile(xs, 0.5)), f0(quantile(xs, 0.99)), xs.length]);
      }
      const by = new Map<string, number>();
      for (const { s: st } of matched) by.set(st.grantedBy ?? 'none', (by.get(st.grantedBy ?? 'none') ?? 0) + 1);
      grantRows.push([
        `${rate}/s`,
        [...by.entries()]
          .sort((a, b) => b[1] - a[1])
          .map(([t, n]) => `${t}: ${n}`)
          .join(', '),
      ]);
      // Temporal's work per checkout, from the histories: the mean, and how many checkouts took 1, 2, 3 … of each.
      const costs = matched.map(({ s: st }) => st.engine);
      for (const [name, key] of [
        ['signals (hand-overs)', 'signals'],
        ['workflow tasks', 'workflowTasks'],
        ['local activities (writes)', 'localActivities'],
        ['activities', 'activities'],
        ['timers started', 'timersStarted'],
        ['timers canceled', 'timersCanceled'],
        ['history events', 'historyEvents'],
      ] as const) {
        const xs = costs.map((c) => c[key]);
        const spread = new Map<number, number>();
        for (const x of xs) spread.set(x, (spread.get(x) ?? 0) + 1);
        engineRows.push([
          `${rate}/s`,
          name,
          (xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length)).toFixed(2),
          [...spread.entries()]
            .sort((a, b) => a[0] - b[0])
            .map(([v, k]) => `${v}: ${k}`)
            .join(', '),
        ]);
      }
    }
  } finally {
    resume();
    unhook();
    process.removeListener('exit', resume);
    agent.destroy();
    await stack.stop();
  }
  const command = PAUSE_S
    ? `npx tsx bench/payment-to-premium.ts --pause-temporal-seconds ${PAUSE_S} --rates ${RATES.join(',')}`
    : `npx tsx bench/payment-to-premium.ts --rates ${RATES.join(',')} --seconds ${SECONDS} --poll-ms ${POLL_MS} --ask-from ${ASK_FROM}${
        WARM_SECONDS !== WARM_DEFAULT.seconds || WARM_RATE !== WARM_DEFAULT.rate
          ? ` --warm-seconds ${WARM_SECONDS} --warm-rate ${WARM_RATE}`
          : ''
      }`;
  sections.push(
    `Run: ${m0.date} · \`${command}\` · ${f0((Date.now() - startedAt) / 1000)} s`,
    `Machine: ${m0.nproc} CPUs (${m0.cpuModel}), ${m0.memoryGiB} GiB RAM, node ${m0.node}, ${stack.pgVersion ? `PostgreSQL ${stack.pgVersion}` : ''} on the same host; load average at start ${m0.loadavg}. The machine is shared and noisy: the emulator, the api, the worker, the Temporal dev server (file-backed, WAL + synchronous=normal, as \`npm start\`), Postgres and other people's work share the CPUs.`,
    statisticsLine(stack.autovacuum),
    '',
  );
  const how = `A purchase is the emulator's checkout: \`payment_intent.succeeded\`, \`customer.subscription.created\`, \`invoice.payment_succeeded\`, each signed and sent after the previous one's answer, each answer awaited as Stripe does. **Premium** is what the app sees at \`GET /v1/sdk/subscribers/{id}\` (provisional access counted), asked one of two ways${INSTRUMENTS.length > 1 ? ', alternate purchases each' : ''}: *the app waits from the payment*, as the SDK's \`checkout({ waitForPremium })\` does: a held read (\`wait_for=premium\`, up to ${HELD_WAIT_MS / 1000} s, answered at once when premium, else woken by the commit) sent when the payment is made, beside the provider's webhooks, asked again until premium or ${PREMIUM_TIMEOUT_MS / 1000} s (at most 20 held at once: the api bounds held reads per client address); *the app reads after the checkout*: a plain read once the provider's three events have all been answered, then held reads if not premium (at most ${PREMIUM_CONCURRENCY} plain reads in flight). Each costs one read per purchase when the receipt has granted. **Authoritative** is the workflow's entitlement row seen active by one watcher query every ${POLL_MS} ms (longer while many wait: a backlog), bounded at ${CONFIRM_TIMEOUT_MS / 1000} s. Both clocks start when the purchase was due (open loop: a purchase is due every 1/rate s whatever the service does). An event answered other than 200 is redelivered by the bench after 1 s, as the provider would, and the wait counts.`;
  if (PAUSE_S) {
    sections.push(
      how,
      '',
      `**Temporal paused:** the bench SIGSTOPs the dev server it started itself, runs the purchases for ${PAUSE_S} s, and SIGCONTs it once every purchase has its premium answer and the ${PAUSE_S} s are over; then it waits for every authoritative confirmation and for the backlog (stored events not processed, outbox rows not handed over) to reach zero.`,
      '',
      table(
        [
          'purchases/s',
          'purchases',
          'premium while paused',
          'premium p50 / p90 / p99 / max ms',
          'non-200 first answers',
          'backlog at resume: events / outbox rows',
          'confirmed after resume',
          'authoritative p50 / p99 ms (from due)',
          'last confirmation, s after resume',
          'backlog drained, s after resume',
          'lost / failed / provisional grants left',
          'load average (1 min) after',
        ],
        pausedRows,
      ),
      '',
      ...aims.map((a) => `- ${a}`),
    );
  } else {
    sections.push(
      how,
      '',
      table(
        [
          'purchases/s',
          'the app asks',
          'purchases',
          'premium p50 / p90 / p99 / max ms',
          'authoritative p50 / p99 / max ms',
          'SDK reads per purchase',
          'purchases with a non-200 first answer',
          'not premium',
          'not confirmed',
          'load average (1 min) after',
        ],
        summary,
      ),
      '',
      ...aims.map((a) => `- ${a}`),
      '',
      '### Where the time goes (median / p99 of each stage over the confirmed purchases; within each path the stages add up to its total per purchase, percentiles do not add)',
      '',
      table(['rate', 'stage', 'p50 ms', 'p99 ms', 'purchases'], stageRows, ['l', 'l', 'r', 'r', 'r']),
      '',
      'Which event granted provisional access first (its receipt, per purchase): ' +
        grantRows.map(([r, t]) => `${r}: ${t}`).join('; ') +
        '.',
      '',
      "### Temporal's work per checkout (from each customer workflow's history; one checkout per customer)",
      '',
      table(['rate', 'per checkout', 'mean', 'checkouts by count (count: checkouts)'], engineRows, [
        'l',
        'l',
        'r',
        'l',
      ]),
      '',
      "### CPU over each rate's run, up to the last confirmation (from /proc; % of one core, the machine has 2)",
      '',
      table(['rate', 'process', 'CPU ms per purchase', 'CPU, % of a core'], cpuRows, ['l', 'l', 'r', 'r']),
      '',
      '### The same CPU by thread (from /proc/<pid>/task; ms per purchase, threads of one name summed)',
      '',
      table(['rate', 'process', 'threads'], threadRows, ['l', 'l', 'l']),
    );
  }
  const text = sections.join('\n');
  if (PAUSE_S)
    writeResults(
      'payment-to-premium.ts --pause-temporal-seconds',
      'Payment to premium with Temporal paused (bench/payment-to-premium.ts --pause-temporal-seconds)',
      text,
    );
  else writeResults('payment-to-premium.ts', 'Payment to premium (bench/payment-to-premium.ts)', text);
  console.log(text);
}

runBench(main);
