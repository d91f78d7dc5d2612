/**
 * Payment to premium: from the psp_a emulator's checkout (it sends `payment_intent.succeeded`,
 * then `customer.subscription.created`, then `invoice.payment_succeeded`, each signed and each
 * waiting for our answer, as Stripe does) to `is_premium: true` at
 * `GET /v1/sdk/subscribers/{app_user_id}`, at a fixed rate of purchases (open loop: a purchase
 * is due every 1/rate s whatever the service does; latency counts from when it was due).
 *
 * Where the time goes comes from clocks the system already keeps, all on this machine: the
 * delivery rows' created_at (Postgres, at insert), the customer workflow's history (signal,
 * activity scheduled / started / completed, stamped by Temporal) and the first SDK answer
 * that says premium.
 *
 *   DATABASE_URL=… npx tsx bench/payment-to-premium.ts [--rates 20,50] [--seconds 30] [--poll-ms 20]
 */
import os from 'node:os';
import http from 'node:http';
import { defaultPayloadConverter } from '@temporalio/common';
import { decodeHistory } from '../temporal/history-payloads';
import { machine, table, f0 } from './lib/report';
import { cpuPhase, quantile, startWebhookStack, writeResults, type WebhookStack } from './lib/webhook-stack';
import { runBench } from './lib/run';
import { threadWindow } from './lib/cpu';
import { lifecycleWorkflowId } from '../temporal/workflow-starts';

const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const RATES = arg('rates', '20,50').split(',').map(Number);
const SECONDS = Number(arg('seconds', '30'));
const POLL_MS = Number(arg('poll-ms', '20'));
const STUCK_MS = 600_000;
const log = (m: string) => console.log(`[premium] ${m}`);

interface Purchase {
  user: string;
  due: number;
  /** Wall clock (ms since epoch) when the checkout was due: every stage below is on this clock. */
  dueWall: number;
  checkoutDone?: number;
  premiumAt?: number;
  /** Redeliveries the provider made after a non-200. */
  retries?: number;
  /** The first answer to each of the three events. */
  firstStatuses?: number[];
  /** When the bench's watcher first saw the entitlement active (committed). */
  visible?: number;
  statuses?: number[];
  customer?: string;
  events?: { id: string; type: string }[];
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
function getJson(url: string, headers: Record<string, string>): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString() || 'null') }),
      );
    });
    req.on('error', reject);
  });
}

async function runRate(stack: WebhookStack, rate: number, tag: string, seconds = SECONDS): Promise<Purchase[]> {
  const total = Math.round(rate * seconds);
  const purchases: Purchase[] = [];
  const t0 = performance.now();
  const wall0 = Date.now();
  // The SDK endpoint is rate-limited per tenant (120 burst, 1/s); the poller is the benchmark's
  // instrument, not an app, so its bucket is kept full.
  const refill = setInterval(
    () =>
      void stack
        .db('rate_limit_buckets')
        .update({ tokens: 120, refreshed_at: stack.db.fn.now() })
        .catch(() => {}),
    1000,
  );
  const one = async (p: Purchase) => {
    const wait = p.due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    // Watched from the moment it is sent: its entitlement may commit before the checkout call returns.
    const visible = new Promise<void>((r) => waiting.set(p.user, r));
    const res = await fetch(`${stack.emulators.psp_a.url}/__control/checkout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        sku: 'pro',
        email: `${p.user}@example.com`,
        target: stack.webhookUrl,
        account: stack.account,
        mode: 'test',
        app_user_id: p.user,
      }),
    });
    const c = (await res.json()) as { customer_id: string; events: { id: string; type: string; status: number }[] };
    p.checkoutDone = performance.now();
    p.customer = c.customer_id;
    p.events = c.events.map((e) => ({ id: e.id, type: e.type }));
    p.statuses = c.events.map((e) => e.status);
    p.firstStatuses = [...p.statuses];
    // The provider's retries: an event answered other than 200 is sent again (same id, same
    // body) until it is; Stripe backs off over hours, this bench after 1 s.
    for (const [k, e] of c.events.entries()) {
      let status = e.status;
      while (status !== 200 && performance.now() - p.due < STUCK_MS) {
        await new Promise((r) => setTimeout(r, 1000));
        const again = await fetch(`${stack.emulators.psp_a.url}/__control/events`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ id: e.id, type: e.type, target: stack.webhookUrl, account: stack.account }),
        });
        status = ((await again.json()) as { status: number }).status;
        p.retries = (p.retries ?? 0) + 1;
        p.statuses[k] = status;
      }
    }
    // Wait for the watcher to see this user's entitlement committed, then ask the SDK as an app would.
    await visible;
    for (;;) {
      // A kept-alive connection the api closed as it was reused (ECONNRESET) is the bench's, not an answer: ask again.
      const r = await getJson(`${stack.apiRoot}/v1/sdk/subscribers/${p.user}`, {
        authorization: `Bearer ${stack.tenant.publishable_key}`,
      }).catch(() => ({ status: 0, body: null }));
      if (r.status === 200 && r.body.is_premium === true) {
        p.premiumAt = performance.now();
        return;
      }
      if (performance.now() - p.due > STUCK_MS) return;
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  };
  // One watcher instead of a poller per purchase (which at 20/s would load the machine more than
  // the service does): every POLL_MS it reads which app users' entitlements became active since
  // its last look. A row is visible only once committed, so this is the commit time + ≤ POLL_MS.
  const byUser = new Map<string, Purchase>();
  const waiting = new Map<string, () => void>();
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
        const p = byUser.get(r.app_user_id);
        if (!p || p.visible) continue;
        p.visible = now;
        waiting.get(p.user)?.();
        waiting.delete(p.user);
      }
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  })();
  const runs: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = t0 + (i * 1000) / rate;
    const p: Purchase = { user: `${tag}_${i}`, due, dueWall: wall0 + (due - t0) };
    purchases.push(p);
    byUser.set(p.user, p);
    runs.push(one(p));
  }
  // Stuck purchases are released after STUCK_MS so the run ends.
  const release = setTimeout(
    () => {
      for (const r of waiting.values()) r();
    },
    total * (1000 / rate) + STUCK_MS,
  );
  await Promise.all(runs);
  clearTimeout(release);
  watching = false;
  await watcher;
  clearInterval(refill);
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
  /** The entitlement row seen active by the bench's watcher (committed; within POLL_MS). */
  visible: number;
  /** The SDK answers premium (GET /v1/sdk/subscribers). */
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
  if (!p.premiumAt || !p.events || !p.customer) return null;
  const [pi, sub] = p.events;
  const rows = await stack
    .db('webhook_deliveries')
    .whereIn('event_id', [pi.id, sub.id])
    .select('event_id', 'created_at');
  const created = new Map(
    rows.map((r: { event_id: string; created_at: Date }) => [r.event_id, r.created_at.getTime()]),
  );
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
    visible: perfToWall(p.visible ?? p.premiumAt),
    seen: perfToWall(p.premiumAt),
    engine: engineCost(events),
  };
}

async function main() {
  const startedAt = Date.now();
  const m0 = machine('');
  const stack = await startWebhookStack(log);
  const sections: string[] = [];
  const summary: (string | number)[][] = [];
  const stageRows: (string | number)[][] = [];
  const cpuRows: (string | number)[][] = [];
  const engineRows: (string | number)[][] = [];
  const threadRows: (string | number)[][] = [];
  try {
    // Warm-up: the api's and worker's first requests load code and fill pools.
    await runRate(stack, 5, 'warm', 4);
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
        ['Temporal dev server', threadWindow(stack.temporal.process.pid!)],
      ] as const;
      // The window on the monotonic clock V8 profiles use (BENCH_CPU_PROF_DIR): bench/lib/profile.ts reads it.
      const fromUs = Number(process.hrtime.bigint() / 1000n);
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
      for (const [name, ms] of [
        ...Object.entries(cpu.parts),
        ['everything else on the machine (other sessions)', others] as const,
      ]) {
        cpuRows.push([`${rate}/s`, name, (ms / ps.length).toFixed(1), f0((100 * ms) / cpu.wallMs) + '%']);
      }
      const done = ps.filter((p) => p.premiumAt !== undefined);
      const lat = done.map((p) => p.premiumAt! - p.due).sort((a, b) => a - b);
      const non200 = ps.filter((p) => p.firstStatuses?.some((s) => s !== 200)).length;
      const retries = ps.reduce((k, p) => k + (p.retries ?? 0), 0);
      const stuck = ps.length - done.length;
      // Lost: an event the emulator sent that has no delivery row.
      const ids = ps.flatMap((p) => p.events?.map((e) => e.id) ?? []);
      const stored = Number((await stack.db('webhook_deliveries').whereIn('event_id', ids).count('* as n'))[0].n);
      summary.push([
        `${rate}/s`,
        ps.length,
        ids.length,
        f0(quantile(lat, 0.5)),
        f0(quantile(lat, 0.9)),
        f0(quantile(lat, 0.99)),
        f0(lat.at(-1) ?? NaN),
        `${non200} (${retries} redeliveries)`,
        stuck,
        ids.length - stored,
        os.loadavg()[0].toFixed(2) + ` (${loadBefore.toFixed(2)} before)`,
      ]);
      log(
        `rate ${rate}: p50 ${f0(quantile(lat, 0.5))} p99 ${f0(quantile(lat, 0.99))} ms, stuck ${stuck}, non-200 ${non200}`,
      );

      // Where the time goes: every purchase's stage boundaries, median per stage.
      // The path to premium: the subscription event's. The payment intent's own hand-over runs beside it
      // (the emulator has its 200 once the row commits), shown last, off the path.
      const pairs: [string, (s: Stages, d: number) => number][] = [
        [
          'receive: emulator sends payment_intent.succeeded → its row (and outbox row) inserted',
          (s, d) => s.piStored - d,
        ],
        [
          'next event: 200 back, emulator sends customer.subscription.created → its row inserted',
          (s) => s.subStored - s.piStored,
        ],
        [
          'hand-over: outbox → dispatcher → signal-with-start recorded by Temporal',
          (s) => s.subSignalled - s.subStored,
        ],
        ['workflow task queue: signal → task started on the worker', (s) => s.taskStarted - s.subSignalled],
        [
          'rules + write + commit: task started → entitlement committed (local activity, one tenant transaction)',
          (s) => s.visible - s.taskStarted,
        ],
        [`read: entitlement visible (seen within ${POLL_MS} ms) → SDK answers premium`, (s) => s.seen - s.visible],
        ["off the path: the payment intent's hand-over (row → its signal recorded)", (s) => s.piSignalled - s.piStored],
        ['off the path: commit → Temporal records the workflow task completed', (s) => s.reported - s.visible],
      ];
      // Stage boundaries of every premium purchase (history read after the rate's run).
      const matched: { s: Stages; d: number }[] = [];
      for (const p of done) {
        const s = await stagesOf(stack, p, perfToWall).catch(() => null);
        if (s) matched.push({ s, d: p.dueWall });
      }
      for (const [name, fn] of pairs) {
        const xs = matched.map(({ s, d }) => fn(s, d)).sort((a, b) => a - b);
        stageRows.push([`${rate}/s`, name, f0(quantile(xs, 0.5)), f0(quantile(xs, 0.99))]);
      }
      // Temporal's work per checkout, from the histories: the mean, and how many checkouts took 1, 2, 3 … of each.
      const costs = matched.map(({ s }) => s.engine);
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
      const totals = matched.map(({ s, d }) => s.seen - d).sort((a, b) => a - b);
      stageRows.push([
        `${rate}/s`,
        `**total** (${matched.length} purchases with full history)`,
        f0(quantile(totals, 0.5)),
        f0(quantile(totals, 0.99)),
      ]);
    }
  } finally {
    await stack.stop();
  }
  sections.push(
    `Run: ${m0.date} · \`npx tsx bench/payment-to-premium.ts --rates ${RATES.join(',')} --seconds ${SECONDS} --poll-ms ${POLL_MS}\` · ${f0((Date.now() - startedAt) / 1000)} s`,
    `Machine: ${m0.nproc} CPUs (${m0.cpuModel}), ${m0.memoryGiB} GiB RAM, node ${m0.node}, ${stack.pgVersion ? `PostgreSQL ${stack.pgVersion}` : ''} on the same host; load average at start ${m0.loadavg}. The machine is shared and noisy: the emulator, the api, the worker, the Temporal dev server (file-backed, WAL + synchronous=normal, as \`npm start\`), Postgres and other people's work share the CPUs.`,
    '',
    `A purchase is the emulator's checkout: \`payment_intent.succeeded\`, \`customer.subscription.created\`, \`invoice.payment_succeeded\`, each signed and sent after the previous one's answer. Premium needs the subscription (a payment intent names only the customer), so the clock runs from the moment the purchase was due (payment intent sent) to the first \`GET /v1/sdk/subscribers/{id}\` answering \`is_premium: true\` (a watcher reads the entitlements every ${POLL_MS} ms and, once a buyer's row is active, the bench asks the SDK endpoint as the app would; one poller per purchase would load the machine more than the service). Open loop, ${SECONDS} s per rate. An event answered other than 200 is redelivered by the bench after 1 s, as the provider would, and the wait counts in the latency; stuck = not premium within ${STUCK_MS / 1000} s.`,
    '',
    table(
      [
        'purchases/s',
        'purchases',
        'webhooks',
        'p50 ms',
        'p90 ms',
        'p99 ms',
        'max ms',
        'purchases with a non-200 first answer (provider redeliveries)',
        'stuck',
        'lost (no row)',
        'load average (1 min) after',
      ],
      summary,
    ),
    '',
    '### Where the time goes (median / p99 of each stage over the purchases; the first six stages add up to the total per purchase, percentiles do not add)',
    '',
    table(['rate', 'stage', 'p50 ms', 'p99 ms'], stageRows, ['l', 'l', 'r', 'r']),
    '',
    "### Temporal's work per checkout (from each customer workflow's history; one checkout per customer)",
    '',
    table(['rate', 'per checkout', 'mean', 'checkouts by count (count: checkouts)'], engineRows, ['l', 'l', 'r', 'l']),
    '',
    "### CPU over each rate's run (from /proc; % of one core, the machine has 2)",
    '',
    table(['rate', 'process', 'CPU ms per purchase', 'CPU, % of a core'], cpuRows, ['l', 'l', 'r', 'r']),
    '',
    '### The same CPU by thread (from /proc/<pid>/task; ms per purchase, threads of one name summed)',
    '',
    table(['rate', 'process', 'threads'], threadRows, ['l', 'l', 'l']),
  );
  const text = sections.join('\n');
  writeResults('payment-to-premium.ts', 'Payment to premium (bench/payment-to-premium.ts)', text);
  console.log(text);
}

runBench(main);
