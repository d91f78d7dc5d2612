/**
 * Outbound webhooks: one tenant must not crowd another's deliveries, and a backlog must not
 * starve the inbound path (issue 28, items 3). The stack as `npm start` runs it (api, worker and
 * outbound worker as their own processes, default outbound settings); everything on loopback.
 *
 * 1. **Fairness.** Tenant B has one endpoint at a receiver that verifies and answers at once and
 *    records an event every 100 ms; B's event → delivery (the event's timestamp, stamped by
 *    Postgres → the receiver's clock) is measured with tenant A idle (**alone**); with A recording
 *    an event every 200 ms, each due at its 20 endpoints (the cap), all at a receiver that answers
 *    at once (**A healthy**); and the same with A's 20 endpoints at a tarpit, a server that takes
 *    the POST and never answers, so every attempt holds its socket for the whole attempt timeout,
 *    10 s (**A tarpits**). The bound: B's p99 with A's tarpits under 1 s, a tenth of one tarpit
 *    attempt (what B would wait, at least, were its drain queued behind A's).
 * 2. **Backlog beside the inbound path.** psp_a checkouts at 20/s as bench:outbound makes them:
 *    **none**, no endpoint; **backlog**, an endpoint receiving every event whose deliveries piled
 *    up while the outbound worker was stopped (SIGSTOP) for a phase of checkouts, then resumed
 *    (SIGCONT) as the measured checkouts start, so the backlog drains beside them. Payment →
 *    premium in both; how long the backlog took.
 *
 *   DATABASE_URL=… npx tsx bench/outbound-fairness.ts [--seconds 15] [--part fairness|backlog|both] [--rate 20]
 *   (OUTBOUND_WEBHOOK_MAX_ATTEMPTS_PER_SECOND=… to compare another drain pace)
 */
import http from 'node:http';
import type net from 'node:net';
import { insertEndpoint } from '../db/outbound-endpoints';
import { createTenant } from '../db/tenants';
import { withTenant } from '../db/tenant-tx';
import { MAX_ACTIVE_DRAINS_PER_TENANT, MAX_ENDPOINTS_PER_TENANT } from '../domain/outbound-limits';
import { f0, machine, table } from './lib/report';
import { checkouts } from './lib/checkouts';
import { quantile, startWebhookStack, writeResults, type WebhookStack } from './lib/webhook-stack';
import { runBench } from './lib/run';
import { loadConfig } from '../runtime/config';
import { startVerifyingReceiver } from './lib/verifying-receiver';
import { arg } from './lib/args';

const SECONDS = Number(arg('seconds', '15'));
const PART = arg('part', 'both');
/** Purchases per second in the backlog part (the issue measured 20/s). */
const RATE = Number(arg('rate', '20'));
const B_EVERY_MS = 100;
/** A's events: each is due at its 20 endpoints, so 100 deliveries a second, the outbound worker's default pace. */
const A_EVERY_MS = 200;
/** B's p99 with A's 20 tarpits, at most: a tenth of one tarpit attempt (10 s), which is what B would wait behind A were its drain queued behind A's. */
const BOUND_MS = 1000;
const log = (m: string) => console.log(`[outbound-fairness] ${m}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Takes every POST and never answers: each attempt holds its socket until the worker's timeout. */
async function startTarpit() {
  let open = 0;
  let most = 0;
  let requests = 0;
  const paths = new Map<string, number>();
  let mostPaths = 0;
  const server = http.createServer((req) => {
    requests++;
    open++;
    most = Math.max(most, open);
    const p = req.url ?? '/';
    paths.set(p, (paths.get(p) ?? 0) + 1);
    mostPaths = Math.max(mostPaths, [...paths.values()].filter((n) => n > 0).length);
    req.socket.once('close', () => {
      open--;
      paths.set(p, paths.get(p)! - 1);
    });
    req.resume();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: (p: string) => `http://127.0.0.1:${port}${p}`,
    stats: () => ({ requests, most, mostPaths, endpoints: paths.size }),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const record = (stack: WebhookStack, tenantId: string) =>
  withTenant(stack.db, tenantId, (trx) =>
    trx.raw('select record_outbound_event(?, ?, null, ?::jsonb)', [
      tenantId,
      'sync_run.finished',
      JSON.stringify({ at: Date.now() }),
    ]),
  );

/** Calls `fn` every `ms` for `seconds` (a bounded count), not waiting for one to end before the next is due. */
async function every(ms: number, seconds: number, fn: () => Promise<unknown>): Promise<void> {
  const n = Math.floor((seconds * 1000) / ms);
  const t0 = Date.now();
  const runs: Promise<unknown>[] = [];
  for (let i = 0; i < n; i++) {
    const wait = t0 + i * ms - Date.now();
    if (wait > 0) await sleep(wait);
    runs.push(fn());
  }
  await Promise.all(runs);
}

async function fairness(stack: WebhookStack): Promise<{ rows: (string | number)[][]; verdict: string }> {
  const tarpit = await startTarpit();
  let secretB = '';
  const rx = await startVerifyingReceiver(() => secretB);
  // A's healthy endpoints answer at once without verifying (their secrets are A's business).
  const healthy = http.createServer((req, res) => req.resume().on('end', () => res.writeHead(204).end()));
  await new Promise<void>((r) => healthy.listen(0, '127.0.0.1', r));
  const healthyUrl = (p: string) => `http://127.0.0.1:${(healthy.address() as net.AddressInfo).port}${p}`;
  try {
    const a = await createTenant(stack.db, { name: 'noisy tenant' });
    const b = await createTenant(stack.db, { name: 'quiet tenant' });
    const { vault, taskQueue } = stack;
    const made = await withTenant(stack.db, b.tenant_id, (trx) =>
      insertEndpoint(trx, vault, {
        tenantId: b.tenant_id,
        url: rx.url,
        description: 'quiet',
        eventTypes: ['sync_run.finished'],
        taskQueue,
      }),
    );
    secretB = made.secret;
    const rows: (string | number)[][] = [];
    const p99 = new Map<string, number>();
    for (const phase of ['alone', 'A healthy', 'A tarpits'] as const) {
      if (phase !== 'alone') {
        // A's endpoints anew for the phase (the last phase's disabled first: its waiting deliveries fail).
        await withTenant(stack.db, a.tenant_id, async (trx) => {
          await trx('webhook_endpoints').update({ enabled: false, disabled_reason: 'next phase' });
          for (let i = 0; i < MAX_ENDPOINTS_PER_TENANT; i++) {
            const url = phase === 'A healthy' ? healthyUrl(`/ep${i}`) : tarpit.url(`/ep${i}`);
            await insertEndpoint(trx, vault, {
              tenantId: a.tenant_id,
              url,
              description: phase,
              eventTypes: ['sync_run.finished'],
              taskQueue,
            });
          }
        });
      }
      rx.arrivals.length = 0;
      let mostDrains = 0;
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          const r = await stack
            .db('outbound_drains')
            .where({ tenant_id: a.tenant_id, posting: true })
            .where('lease_until', '>', stack.db.fn.now())
            .count({ n: '*' })
            .first();
          mostDrains = Math.max(mostDrains, Number(r?.n ?? 0));
          await sleep(100);
        }
      })();
      log(`fairness: ${phase}, ${SECONDS} s`);
      const expected = Math.floor((SECONDS * 1000) / B_EVERY_MS);
      await Promise.all([
        every(B_EVERY_MS, SECONDS, () => record(stack, b.tenant_id)),
        phase !== 'alone' ? every(A_EVERY_MS, SECONDS, () => record(stack, a.tenant_id)) : Promise.resolve(),
      ]);
      const deadline = Date.now() + 60_000;
      while (rx.arrivals.length < expected && Date.now() < deadline) await sleep(100);
      sampling = false;
      await sampler;
      const lags = rx.arrivals.map((a) => a.arrivedAt - a.recordedAt).sort((x, y) => x - y);
      p99.set(phase, quantile(lags, 0.99));
      const t = tarpit.stats();
      const counts =
        phase === 'alone'
          ? null
          : await stack
              .db('outbound_deliveries as d')
              .join('webhook_endpoints as w', 'w.id', 'd.endpoint_id')
              .where({ 'w.tenant_id': a.tenant_id, 'w.description': phase })
              .select(
                stack.db.raw('count(*)::int as n'),
                stack.db.raw(`count(*) filter (where d.status = 'succeeded')::int as ok`),
              )
              .first();
      const tar = phase === 'A tarpits';
      rows.push([
        phase,
        `${rx.arrivals.length}/${expected}`,
        f0(quantile(lags, 0.5)),
        f0(quantile(lags, 0.9)),
        f0(quantile(lags, 0.99)),
        f0(lags.at(-1) ?? NaN),
        counts ? `${counts.n} / ${counts.ok}` : '–',
        tar ? t.requests : '–',
        tar ? `${t.endpoints}/${MAX_ENDPOINTS_PER_TENANT}` : '–',
        phase === 'alone' ? '–' : `${mostDrains} (cap ${MAX_ACTIVE_DRAINS_PER_TENANT})`,
        tar ? t.mostPaths : '–',
        tar ? t.most : '–',
        rx.refused(),
      ]);
      log(JSON.stringify(rows.at(-1)));
    }
    // Stop A: its waiting deliveries fail as the endpoints are disabled.
    await withTenant(stack.db, a.tenant_id, (trx) =>
      trx('webhook_endpoints').update({ enabled: false, disabled_reason: 'bench over' }),
    );
    const tar = p99.get('A tarpits')!;
    const verdict = `B's p99 with A's ${MAX_ENDPOINTS_PER_TENANT} tarpits: ${f0(tar)} ms, ${tar <= BOUND_MS ? 'within' : 'OUTSIDE'} the bound of ${BOUND_MS} ms (B's p99 alone: ${f0(p99.get('alone')!)} ms, with A's endpoints healthy: ${f0(p99.get('A healthy')!)} ms).`;
    log(verdict);
    return { rows, verdict };
  } finally {
    await rx.close();
    await tarpit.close();
    healthy.closeAllConnections();
    await new Promise<void>((r) => healthy.close(() => r()));
  }
}

async function backlog(stack: WebhookStack): Promise<(string | number)[][]> {
  let secret = '';
  const rx = await startVerifyingReceiver(() => secret);
  const rows: (string | number)[][] = [];
  try {
    log('backlog: warm-up');
    await checkouts(stack, 5, 'warm', 3);
    log(`backlog: none, ${RATE}/s for ${SECONDS} s`);
    const none = await checkouts(stack, RATE, 'none', SECONDS);
    const { row, secret: sk } = await withTenant(stack.db, stack.tenant.tenant_id, (trx) =>
      insertEndpoint(trx, stack.vault, {
        tenantId: stack.tenant.tenant_id,
        url: rx.url,
        description: 'bench',
        eventTypes: [],
        taskQueue: stack.taskQueue,
      }),
    );
    secret = sk;
    log(`backlog: outbound worker stopped, ${RATE}/s for ${SECONDS} s`);
    process.kill(stack.outboundWorker.pid, 'SIGSTOP');
    let piled: number;
    try {
      await checkouts(stack, RATE, 'pile', SECONDS);
      piled = Number(
        (await stack.db('outbound_deliveries').where({ endpoint_id: row.id }).count({ n: '*' }).first())!.n,
      );
    } finally {
      process.kill(stack.outboundWorker.pid, 'SIGCONT');
    }
    const resumed = Date.now();
    const resumedAt = new Date(resumed);
    log(`backlog: ${piled} deliveries waiting; outbound worker resumed, ${RATE}/s for ${SECONDS} s`);
    // Drained: every delivery recorded before the resume has succeeded (new ones go out beside them).
    let delivered = 0;
    const drained = (async () => {
      const deadline = Date.now() + 180_000;
      while (Date.now() < deadline) {
        delivered = Number(
          (await stack
            .db('outbound_deliveries')
            .where({ endpoint_id: row.id, status: 'succeeded' })
            .where('created_at', '<', resumedAt)
            .count({ n: '*' })
            .first())!.n,
        );
        if (delivered >= piled) break;
        await sleep(200);
      }
      return Date.now() - resumed;
    })();
    const during = await checkouts(stack, RATE, 'drain', SECONDS);
    const drainMs = await drained;
    const p50 = (xs: number[]) => quantile(xs, 0.5);
    rows.push(['none', f0(p50(none)), f0(quantile(none, 0.99)), '–', '–', '–']);
    rows.push([
      'backlog',
      f0(p50(during)),
      f0(quantile(during, 0.99)),
      `${(p50(during) / p50(none)).toFixed(2)}×`,
      piled,
      delivered >= piled
        ? `${(drainMs / 1000).toFixed(1)} s (${f0((piled * 1000) / drainMs)}/s)`
        : `not within 180 s (${delivered})`,
    ]);
    log(JSON.stringify(rows));
    await withTenant(stack.db, stack.tenant.tenant_id, (trx) =>
      trx('webhook_endpoints').where({ id: row.id }).update({ enabled: false }),
    );
    return rows;
  } finally {
    await rx.close();
  }
}

async function main() {
  // The receivers listen on 127.0.0.1: the operator's switch, passed to the stack's processes.
  process.env.OUTBOUND_WEBHOOKS_ALLOW_PRIVATE_ADDRESSES = '1';
  // The stack's processes read the same environment; a pace other than the default is a comparison run.
  const paceNow = loadConfig().outboundWebhooks.maxAttemptsPerSecond;
  const paceSet = paceNow === loadConfig({}).outboundWebhooks.maxAttemptsPerSecond ? undefined : paceNow;
  const pace = paceSet ?? `${paceNow} (default)`;
  const m0 = machine('');
  const stack = await startWebhookStack(log);
  let fair: Awaited<ReturnType<typeof fairness>> | undefined;
  let back: (string | number)[][] | undefined;
  try {
    if (PART !== 'backlog') fair = await fairness(stack);
    if (PART !== 'fairness') back = await backlog(stack);
  } finally {
    await stack.stop();
  }
  const m1 = machine(stack.pgVersion);
  const parts: string[] = [
    `Run: ${m0.date} · ${m1.nproc} cores (${m1.cpuModel}), ${m1.memoryGiB} GiB · Node ${m1.node} · Postgres ${m1.postgres} · load average before: ${m0.loadavg}, after: ${m1.loadavg} · OUTBOUND_WEBHOOK_MAX_ATTEMPTS_PER_SECOND ${pace}, attempt timeout 10 s. The machine is shared: read the times against the load average.`,
  ];
  if (fair) {
    parts.push(`**Fairness.** Tenant B records an event every ${B_EVERY_MS} ms for ${SECONDS} s to its one endpoint (answers at once). **A healthy**: tenant A records one every ${A_EVERY_MS} ms, each due at its ${MAX_ENDPOINTS_PER_TENANT} endpoints, which answer at once; **A tarpits**: the same at ${MAX_ENDPOINTS_PER_TENANT} endpoints on a tarpit (takes the POST, never answers). B's event → delivery in ms (Postgres timestamp → arrival).

${table(['phase', 'B delivered', 'B p50', 'p90', 'p99', 'max', 'A deliveries recorded / delivered', 'tarpit POSTs', 'A endpoints tried', 'A drains posting at once, most', 'A endpoints with a POST open at once, most', 'tarpit sockets open at once, most', 'signature refused'], fair.rows)}

${fair.verdict}`);
  }
  if (back) {
    parts.push(`**Backlog beside the inbound path.** psp_a checkouts at ${RATE}/s for ${SECONDS} s per phase. **backlog**: an endpoint receiving every event type, the outbound worker stopped for ${SECONDS} s of checkouts and resumed as the measured ones start. Payment → premium in ms.

${table(['phase', 'premium p50', 'p99', 'p50 ÷ none', 'deliveries waiting at resume', 'backlog delivered in'], back)}`);
  }
  // A run at another pace is a comparison: its own block, beside the default's.
  writeResults(
    paceSet ? `outbound-fairness.ts, pace ${paceSet}` : 'outbound-fairness.ts',
    'Outbound webhooks: one tenant against another, and a backlog against the inbound path (bench/outbound-fairness.ts)',
    parts.join('\n\n'),
  );
  log('written to bench/RESULTS.md');
}

runBench(main);
