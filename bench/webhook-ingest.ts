/**
 * Sustained webhook ingest: 60 s of signed psp_a events at the highest rate the receiver takes
 * (closed loop, N keep-alive connections), counted durably: every 200 must be a stored row, and
 * no event may be stored twice. Reported beside, in the same run and on the same machine:
 *   - the floor: a bare endpoint that only verifies the signature and answers 200 (bench/webhook-floor.ts);
 *   - pgbench's single-row insert rate on a scratch database (created and dropped here);
 *   - the engine's ceiling on the same Temporal dev server (empty and one-activity workflows).
 * The events of the 60 s are a burst above what the workflows process per second; after it the
 * benchmark retries whatever got no 200 (as a provider does), waits for the backlog to drain and
 * counts: every purchase's subscription and entitlement written, once.
 *
 * Events: the emulator's checkout (payment_intent.succeeded, customer.subscription.created,
 * invoice.payment_succeeded) captured once, then cloned per purchase with fresh ids and signed
 * with the account's secret using the emulator's own signing function (Stripe's scheme).
 *
 * Last, the receive path alone: the same closed loop for --paused-seconds with the engine stopped (SIGSTOP of the
 * stack's own worker and dev server, as bench:premium's paused mode), so the receiver's own ceiling on this machine
 * reads beside the rate it holds while the engine works through the backlog on the same cores.
 *
 * The stopped engine's phase is reported in windows (--paused-window-seconds, 20): rate and CPU per event in each,
 * with the backlog it leaves, so a receipt that costs more as the backlog grows shows (issue 49).
 *
 *   DATABASE_URL=… npx tsx bench/webhook-ingest.ts [--seconds 60] [--connections 32] [--floor-seconds 10] [--drain-timeout-s 900] [--paused-seconds 20] [--paused-window-seconds 20]
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { withDatabase } from '../db/knex';
import { freePort } from '../runtime/ports';
import { startServer } from './lib/proc';
import { machine, table, f0, f1, f2 } from './lib/report';
import { captureCheckout, closedLoop, makeSender } from './lib/ingest-load';
import { cpuPhase, startWebhookStack, storedDeliveries, writeResults, type WebhookStack } from './lib/webhook-stack';
import { emptyWorkflow, oneActivityWorkflow } from './engine/workflows';
import * as engineActivities from './engine/activities';
import { runBench } from './lib/run';
import { arg } from './lib/args';
import { statisticsLine } from './lib/autovacuum-stand-in';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SECONDS = Number(arg('seconds', '60'));
const CONNECTIONS = Number(arg('connections', '32'));
const FLOOR_SECONDS = Number(arg('floor-seconds', '10'));
/** The longest the bench waits for the backlog to drain (it then reports what is left). */
const DRAIN_TIMEOUT_S = Number(arg('drain-timeout-s', '900'));
/** The receive path alone, with the engine stopped: 0 leaves it out. */
const PAUSED_SECONDS = Number(arg('paused-seconds', '20'));
/** The stopped engine's phase is reported in windows of this many seconds (the last one may be shorter). */
const PAUSED_WINDOW_S = Number(arg('paused-window-seconds', '20'));
const log = (m: string) => console.log(`[ingest] ${m}`);

/** pgbench's single-row insert rate on a scratch database of the same server. */
function pgbench(seconds: number): { tps: number; clients: number; detail: string } {
  const base = process.env.DATABASE_URL!;
  const name = `pgbench_scratch_${Date.now().toString(36)}`;
  const url = withDatabase(base, name);
  const psql = (db: string, sql: string) =>
    execFileSync('psql', [db, '-v', 'ON_ERROR_STOP=1', '-qc', sql], { encoding: 'utf8' });
  const bin = ['/usr/bin/pgbench', '/usr/lib/postgresql/15/bin/pgbench'].find((p) => fs.existsSync(p)) ?? 'pgbench';
  const clients = 8;
  psql(base, `create database "${name}"`);
  try {
    psql(
      url,
      'create table ingest (id bigserial primary key, event_id text not null unique, payload jsonb not null, created_at timestamptz not null default now())',
    );
    const script = path.join(os.tmpdir(), `${name}.sql`);
    // One row per transaction, shaped like a delivery row (unique text key + a small jsonb), autocommit.
    fs.writeFileSync(
      script,
      `insert into ingest (event_id, payload) values ('evt_' || gen_random_uuid()::text, '{"type":"payment_intent.succeeded"}');\n`,
    );
    const out = execFileSync(bin, ['-n', '-f', script, '-c', String(clients), '-j', '2', '-T', String(seconds), url], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    fs.rmSync(script, { force: true });
    const tps = Number(/tps = ([\d.]+)/.exec(out)?.[1]);
    const latency = /latency average = ([\d.]+ ms)/.exec(out)?.[1] ?? '';
    return { tps, clients, detail: `${bin} -n -c ${clients} -j 2 -T ${seconds}, latency average ${latency}` };
  } finally {
    psql(base, `drop database if exists "${name}" with (force)`);
  }
}

/** The engine's ceiling on the bench's own Temporal server: workflows/s completed, 32 in flight. */
async function engineCeiling(stack: WebhookStack, count: number): Promise<{ empty: number; oneActivity: number }> {
  const native = await NativeConnection.connect({ address: stack.temporal.address });
  const taskQueue = `engine-${process.pid}`;
  const worker = await Worker.create({
    connection: native,
    taskQueue,
    workflowsPath: path.join(HERE, 'engine/workflows.ts'),
    activities: engineActivities,
    maxConcurrentWorkflowTaskExecutions: 64,
  });
  const running = worker.run();
  // The engine alone: a client without the stack's payload codec, as the engine workflows' worker has none
  // (the stack's client would encrypt what this worker refuses to read as plaintext, and the reverse).
  const client = new Client({ connection: stack.client.connection });
  const rate = async (wf: typeof emptyWorkflow | typeof oneActivityWorkflow, n: number) => {
    let next = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < n) {
          const i = next++;
          await client.workflow.execute(wf, { taskQueue, workflowId: `engine-${wf.name}-${Date.now()}-${i}` });
        }
      }),
    );
    return n / ((performance.now() - t0) / 1000);
  };
  try {
    await rate(emptyWorkflow, 20);
    return { empty: await rate(emptyWorkflow, count), oneActivity: await rate(oneActivityWorkflow, count) };
  } finally {
    worker.shutdown();
    await running;
    await native.close();
  }
}

async function main() {
  const startedAt = Date.now();
  const m0 = machine('');
  const stack = await startWebhookStack(log);
  const tag = crypto.randomBytes(3).toString('hex');
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  let text: string;
  try {
    const bodies = await captureCheckout(stack);
    if (bodies.length !== 3) throw new Error(`captured ${bodies.length} checkout events, expected 3`);

    // The floor, as its own process (so it does not share the load generator's event loop).
    const floorPort = await freePort();
    const floor = await startServer({
      cwd: path.resolve(HERE, '..'),
      script: 'bench/webhook-floor.ts',
      env: { ...process.env, PORT: String(floorPort), WEBHOOK_SECRET: stack.webhookSecret },
      port: floorPort,
      logFile: path.join(os.tmpdir(), `webhook-floor-${tag}.log`),
    });
    const floorSender = makeSender(
      `http://127.0.0.1:${floorPort}/api/webhooks/psp_a`,
      bodies,
      stack.webhookSecret,
      `f${tag}`,
      agent,
    );
    const receiver = makeSender(stack.webhookUrl, bodies, stack.webhookSecret, tag, agent);

    // Warm-up of the real receiver (code loaded, pools filled); its events count like the rest.
    const warm = await closedLoop(receiver, 3, 0, CONNECTIONS);
    log(`warm-up: ${warm.sent} events`);
    // A running installation has statistics before a burst; a scratch database has those of its empty tables
    // until autovacuum's first pass, up to a minute in (BENCH_PRIME_STATISTICS=0: measure that minute).
    const primed = process.env.BENCH_PRIME_STATISTICS !== '0';
    if (primed) await (stack.autovacuum ? stack.autovacuum.passNow() : stack.db.raw('analyze'));

    const floorA = await closedLoop(floorSender, FLOOR_SECONDS, 0, CONNECTIONS);
    log(`floor: ${f0(floorA.ok.length / floorA.seconds)}/s`);
    const loadBefore = os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' ');
    const endCpu = await cpuPhase(stack);
    const run = await closedLoop(receiver, SECONDS, warm.sent, CONNECTIONS);
    const cpu = await endCpu();
    const tEnd = Date.now();
    const accepted = run.ok.length / run.seconds;
    log(`receiver: ${f0(accepted)}/s accepted, statuses ${JSON.stringify(run.statuses)}`);
    const backlogAtEnd = await unprocessed(stack);
    const floorB = await closedLoop(floorSender, FLOOR_SECONDS, 1_000_000_000, CONNECTIONS);
    await floor.stop();
    const floorRate = (floorA.ok.length + floorB.ok.length) / (floorA.seconds + floorB.seconds);

    // Durability of the answers: every 200 is a row; no row twice.
    const all = [...warm.ok, ...warm.notOk, ...run.ok, ...run.notOk];
    const okIds = [...warm.ok, ...run.ok].map(receiver.eventId);
    const rowsFor = (ids: string[]) => storedDeliveries(stack, ids);
    const okStored = await rowsFor(okIds);
    const lost = okIds.length - okStored;

    // A provider retries what got no 200 (same id, same body).
    let retried = 0;
    let pending = [...warm.notOk, ...run.notOk];
    for (let round = 0; pending.length && round < 20; round++) {
      const again: number[] = [];
      for (const i of pending) if ((await receiver.send(i)) !== 200) again.push(i);
      retried += pending.length;
      pending = again;
    }

    // The backlog drains: every stored event processed by its customer's workflow. What is left
    // once the floor's second run and the retries are over drains with nothing else of ours running.
    const leftNow = await unprocessed(stack);
    const endDrainCpu = await cpuPhase(stack);
    const drainStart = Date.now();
    let left = Infinity;
    while (left > 0 && Date.now() - drainStart < DRAIN_TIMEOUT_S * 1000) {
      left = await unprocessed(stack);
      if (left > 0) await new Promise((r) => setTimeout(r, 1000));
    }
    const drainCpu = await endDrainCpu();
    // From the end of the 60 s: the floor's second run, the retries and the wait all overlap the drain.
    const drainS = (Date.now() - tEnd) / 1000;
    const processingRate = (all.length - pending.length) / ((Date.now() - tEnd) / 1000 + run.seconds);

    const totals = (await stack
      .db('webhook_deliveries')
      .select(
        stack.db.raw('count(*)::int as rows'),
        stack.db.raw('count(distinct event_id)::int as ids'),
        stack.db.raw('max(delivery_count)::int as max_count'),
        stack.db.raw(`count(*) filter (where status = 'processed')::int as processed`),
        stack.db.raw(`count(*) filter (where status = 'failed')::int as failed`),
      )
      .first()) as { rows: number; ids: number; max_count: number; processed: number; failed: number };
    // Each purchase whose subscription event or invoice got in has one subscription and one entitlement.
    const purchases = new Set(all.filter((i) => i % 3 !== 0).map((i) => receiver.purchase(i))).size;
    const subs = Number((await stack.db('subscriptions').count('* as n'))[0].n);
    const ents = (await stack
      .db('entitlements')
      .select(
        stack.db.raw('count(*)::int as n'),
        stack.db.raw(`count(*) filter (where state = 'active')::int as active`),
        stack.db.raw('count(distinct app_user_id)::int as users'),
      )
      .first()) as { n: number; active: number; users: number };
    // The provisional write's share of the receive path: which deliveries granted premium at receipt
    // (the statement stamps premium_at), and what the workflows' writes left of those grants (none: superseded).
    const grants = (
      await stack
        .db('webhook_deliveries')
        .select('event_type', stack.db.raw('count(*)::int as n'), stack.db.raw('count(premium_at)::int as granted'))
        .groupBy('event_type')
        .orderBy('event_type')
    ).map((r: { event_type: string; n: number; granted: number }) => r);
    const granted = grants.reduce((k, r) => k + r.granted, 0);
    const provisionalLeft = Number(
      (await stack.db('provisional_access').where({ kind: 'grant', state: 'provisional' }).count('* as n'))[0].n,
    );
    log(
      `drained in ${f1(drainS)} s; rows ${totals.rows}, subscriptions ${subs}, entitlements ${ents.n} (${ents.active} active) for ${purchases} purchases`,
    );

    const pg = pgbench(15);
    log(`pgbench: ${f0(pg.tps)} tps`);
    const engine = await engineCeiling(stack, 150);
    log(`engine: ${f1(engine.empty)} empty/s, ${f1(engine.oneActivity)} one-activity/s`);

    // The receive path alone: nothing of the engine runs (its processes stopped, never killed), so what it would
    // take of the cores goes to the receipts. Last, so no figure above is measured beside its backlog.
    // In windows of PAUSED_WINDOW_S: the receipt's cost must not grow with the backlog it leaves (issue 49).
    let paused: {
      rate: number;
      p50: number;
      p99: number;
      sent: number;
      ok: number;
      lost: number;
      cpu: string;
      windows: PausedWindow[];
    } | null = null;
    if (PAUSED_SECONDS > 0) {
      const engineProcesses = [stack.worker.pid, stack.temporal.process.pid!];
      for (const pid of engineProcesses) process.kill(pid, 'SIGSTOP');
      try {
        const endPausedCpu = await cpuPhase(stack);
        const okAll: number[] = [];
        const lat: { p50: number; p99: number }[] = [];
        const windows: PausedWindow[] = [];
        let sent = 0;
        const t0 = performance.now();
        for (let w = 0; w * PAUSED_WINDOW_S < PAUSED_SECONDS; w++) {
          const endWindowCpu = await cpuPhase(stack);
          const seconds = Math.min(PAUSED_WINDOW_S, PAUSED_SECONDS - w * PAUSED_WINDOW_S);
          const r = await closedLoop(receiver, seconds, 2_000_000_000 + sent, CONNECTIONS);
          const c = await endWindowCpu();
          sent += r.sent;
          okAll.push(...r.ok);
          lat.push({ p50: r.p50, p99: r.p99 });
          windows.push({
            rate: r.ok.length / r.seconds,
            pgMs: c.parts['Postgres (this database)'] / Math.max(1, r.ok.length),
            apiMs: c.parts.api / Math.max(1, r.ok.length),
            p99: r.p99,
            backlog: await unprocessed(stack),
            load: os
              .loadavg()
              .map((x) => x.toFixed(2))
              .join(' '),
          });
          log(
            `engine stopped, window ${w + 1}: ${f0(windows[w].rate)}/s, Postgres ${f2(windows[w].pgMs)} ms, api ${f2(windows[w].apiMs)} ms per event, backlog ${windows[w].backlog}`,
          );
        }
        const seconds = (performance.now() - t0) / 1000;
        const c = await endPausedCpu();
        const ids = okAll.map(receiver.eventId);
        paused = {
          rate: okAll.length / seconds,
          p50: Math.max(...lat.map((l) => l.p50)),
          p99: Math.max(...lat.map((l) => l.p99)),
          sent,
          ok: okAll.length,
          lost: ids.length - (await rowsFor(ids)),
          cpu: cpuParts(c, okAll.length, 'accepted event'),
          windows,
        };
      } finally {
        for (const pid of engineProcesses) process.kill(pid, 'SIGCONT');
      }
      log(`receiver with the engine stopped: ${f0(paused.rate)}/s accepted`);
    }

    text = [
      `Run: ${m0.date} · \`npx tsx bench/webhook-ingest.ts --seconds ${SECONDS} --connections ${CONNECTIONS} --floor-seconds ${FLOOR_SECONDS} --paused-seconds ${PAUSED_SECONDS}\` · ${f0((Date.now() - startedAt) / 1000)} s`,
      `Machine: ${m0.nproc} CPUs (${m0.cpuModel}), ${m0.memoryGiB} GiB RAM, node ${m0.node}, PostgreSQL ${stack.pgVersion} on the same host; load average at start ${m0.loadavg}, before the 60 s ${loadBefore}, at the end ${os
        .loadavg()
        .map((x) => x.toFixed(2))
        .join(
          ' ',
        )}. Shared and noisy: the load generator, the api, the worker, the Temporal dev server (file-backed, WAL + synchronous=normal as \`npm start\`), Postgres and other people's work share the CPUs; read the ratios, measured in this one run, before the absolute rates.`,
      statisticsLine(stack.autovacuum) +
        (primed
          ? " The warm-up's tables were analyzed before the measured run, as a running installation's have been."
          : ' Not analyzed before the measured run (BENCH_PRIME_STATISTICS=0).'),
      '',
      `Load: closed loop, ${CONNECTIONS} keep-alive connections, each sending the next signed event as soon as the last is answered. Events are the emulator's checkout (payment_intent.succeeded, customer.subscription.created, invoice.payment_succeeded) cloned with fresh ids per purchase: one customer workflow started per purchase, two signals to it running.`,
      '',
      table(
        ['what', 'events/s', 'ratio to the floor', 'p50 / p99 ms per request', 'notes'],
        [
          [
            'bare endpoint: verify signature, answer 200 (floor)',
            f0(floorRate),
            '1',
            `${f1(floorA.p50)} / ${f1(floorA.p99)}`,
            `${FLOOR_SECONDS} s before and ${FLOOR_SECONDS} s after the receiver's run`,
          ],
          [
            `**receiver, accepted durably (200)**, ${SECONDS} s`,
            `**${f0(accepted)}**`,
            f2(accepted / floorRate),
            `${f1(run.p50)} / ${f1(run.p99)}`,
            `${run.sent} sent: ${Object.entries(run.statuses)
              .map(([s, n]) => `${n}× ${s}`)
              .join(', ')}`,
          ],
          ['pgbench single-row insert (autocommit)', f0(pg.tps), f2(pg.tps / floorRate), '', pg.detail],
          [
            'engine ceiling: empty workflows completed',
            f1(engine.empty),
            f2(engine.empty / floorRate),
            '',
            '150 with 32 in flight, same dev server, after the drain',
          ],
          [
            'engine ceiling: one-activity workflows completed',
            f1(engine.oneActivity),
            f2(engine.oneActivity / floorRate),
            '',
            'the least an event-processing workflow costs',
          ],
          ...(paused
            ? [
                [
                  `receiver with the engine stopped (its worker and dev server paused), ${PAUSED_SECONDS} s`,
                  f0(paused.rate),
                  f2(paused.rate / floorRate),
                  `${f1(paused.p50)} / ${f1(paused.p99)}`,
                  `the receive path alone, last in the run: ${paused.ok} of ${paused.sent} answered 200, ${paused.lost} of them missing`,
                ],
              ]
            : []),
          [
            'processing (events applied by the workflows, whole run incl. drain)',
            f1(processingRate),
            f2(processingRate / floorRate),
            '',
            'stored events / (60 s + drain)',
          ],
        ],
        ['l', 'r', 'r', 'r', 'l'],
      ),
      '',
      `**Provisional access at receipt** (the grant written in the delivery's own statement, counted in the receiver's rate above): ${granted} of ${totals.rows} stored events granted it — ${grants
        .map((r) => `${r.event_type} ${r.granted} of ${r.n}`)
        .join(
          ', ',
        )}; ${provisionalLeft} grants still provisional after the drain (the workflows' writes supersede them).`,
      '',
      `**Aims (issue #31):** durable ingest ≥ 800 events/s: ${f0(accepted)}/s, ${accepted >= 800 ? '**met**' : '**not met**'}${paused ? ` (the receive path alone, the engine stopped: ${f0(paused.rate)}/s)` : ''}; processing ≥ 150 events/s incl. drain: ${f1(processingRate)}/s, ${processingRate >= 150 ? '**met**' : '**not met**'} (on this machine, at this load).`,
      '',
      `**Counted at the end:** ${all.length} events sent (warm-up included); ${okIds.length} answered 200 the first time, **${lost} of them missing** from webhook_deliveries (lost); ${retried - pending.length} retried after a non-200 and accepted, ${pending.length} still refused. Rows ${totals.rows} for ${totals.ids} distinct event ids (**${totals.rows - totals.ids} duplicated**), max delivery_count ${totals.max_count}, ${totals.failed} failed. Backlog at the end of the ${SECONDS} s: ${backlogAtEnd} stored events not yet processed; drained ${f1(drainS)} s after the end of the run (${totals.processed} of ${totals.rows} processed). ${purchases} purchases with a subscription event → ${subs} subscriptions, ${ents.n} entitlements (${ents.active} active, ${ents.users} distinct app users): each effect once.`,
      '',
      `CPU during the ${SECONDS} s (from /proc; % of one core, the machine has 2): ${cpuParts(cpu, run.ok.length, 'accepted event')}.`,
      '',
      `CPU during the rest of the drain (${f0(leftNow)} events in ${f1(drainCpu.wallMs / 1000)} s, ${f1(leftNow / Math.max(0.001, drainCpu.wallMs / 1000))}/s; after the floor's second run and the retries, nothing but the drain of ours runs): ${cpuParts(drainCpu, leftNow, 'event')}; the machine ${f0((100 * drainCpu.machineBusyMs) / drainCpu.wallMs)}% busy of 200%.`,
      ...(paused
        ? [
            '',
            `CPU with the engine stopped (the last ${PAUSED_SECONDS} s): ${paused.cpu}.`,
            '',
            `The engine stopped, window by window (the backlog only grows: nothing hands it over; a receipt must cost the same at its end as at its start):`,
            '',
            table(
              [
                'window',
                'accepted/s',
                'ratio to the first',
                'Postgres ms per event',
                'api ms per event',
                'p99 ms',
                'unprocessed after',
                'load average',
              ],
              paused.windows.map((w, k) => [
                `${k * PAUSED_WINDOW_S}–${Math.min(PAUSED_SECONDS, (k + 1) * PAUSED_WINDOW_S)} s`,
                f0(w.rate),
                f2(w.rate / paused!.windows[0].rate),
                f2(w.pgMs),
                f2(w.apiMs),
                f1(w.p99),
                w.backlog,
                w.load,
              ]),
              ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'l'],
            ),
            '',
            `**Aim (issue #49):** no window below 0.9× the first: lowest ${f2(Math.min(...paused.windows.map((w) => w.rate)) / paused.windows[0].rate)}×, last ${f2(paused.windows[paused.windows.length - 1].rate / paused.windows[0].rate)}×, ${Math.min(...paused.windows.map((w) => w.rate)) >= 0.9 * paused.windows[0].rate ? '**met**' : '**not met**'}; ${paused.lost} lost.`,
          ]
        : []),
    ].join('\n');
  } finally {
    agent.destroy();
    await stack.stop();
  }
  writeResults('webhook-ingest.ts', 'Sustained webhook ingest (bench/webhook-ingest.ts)', text);
  console.log(text);
}

/** One window of the stopped engine's phase: per accepted event, and the backlog left at its end. */
interface PausedWindow {
  rate: number;
  pgMs: number;
  apiMs: number;
  p99: number;
  backlog: number;
  load: string;
}

/** Stored events no workflow has processed yet. */
async function unprocessed(stack: WebhookStack): Promise<number> {
  return Number((await stack.db('webhook_deliveries').where({ status: 'received' }).count('* as n'))[0].n);
}

/** Each part's share of a phase, and per event: "api 43% (1.28 ms per accepted event), …". */
function cpuParts(
  phase: { parts: Record<string, number>; machineBusyMs: number; wallMs: number },
  events: number,
  unit: string,
): string {
  const ours = Object.values(phase.parts).reduce((a, b) => a + b, 0);
  return [...Object.entries(phase.parts), ['everything else on the machine', phase.machineBusyMs - ours] as const]
    .map(([name, ms]) => `${name} ${f0((100 * ms) / phase.wallMs)}% (${f2(ms / Math.max(1, events))} ms per ${unit})`)
    .join(', ');
}

runBench(main);
