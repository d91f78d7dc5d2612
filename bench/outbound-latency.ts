/**
 * Outbound webhooks at the rates of bench:premium: the same psp_a checkouts (three signed
 * events each, open loop at a fixed rate), run twice per rate side by side — once with no
 * webhook endpoint, once with one endpoint that receives every event type — measuring
 *
 * - payment → premium (checkout due → entitlement row active, seen by a 20 ms watcher) in
 *   both runs: the fan-out must not slow the inbound path, so the two should match;
 * - event → tenant delivery (the event's `timestamp`, stamped by Postgres when the row is
 *   written in the state change's transaction → the receiver's arrival clock, same machine),
 *   every delivery verified with the standardwebhooks library.
 *
 *   DATABASE_URL=… npx tsx bench/outbound-latency.ts [--rates 20,50] [--seconds 20] [--rounds 3]
 */
import os from 'node:os';
import { insertEndpoint } from '../db/outbound-endpoints';
import { withTenant } from '../db/tenant-tx';
import { f0, machine, table } from './lib/report';
import { cpuPhase, quantile, startWebhookStack, writeResults } from './lib/webhook-stack';
import { runBench } from './lib/run';
import { checkouts } from './lib/checkouts';
import { startVerifyingReceiver, type VerifiedArrival } from './lib/verifying-receiver';
import { arg } from './lib/args';

const RATES = arg('rates', '20,50').split(',').map(Number);
const SECONDS = Number(arg('seconds', '20'));
/** Rounds per rate; the phase order alternates (without/with, then with/without) so drift in the machine's load cancels. */
const ROUNDS = Number(arg('rounds', '3'));
const log = (m: string) => console.log(`[outbound] ${m}`);

async function main() {
  // The receiver listens on 127.0.0.1: the operator's switch, passed to the stack's processes.
  process.env.OUTBOUND_WEBHOOKS_ALLOW_PRIVATE_ADDRESSES = '1';
  const m0 = machine('');
  const stack = await startWebhookStack(log);
  let secret = '';
  const rx = await startVerifyingReceiver(() => secret);
  const rows: (string | number)[][] = [];
  try {
    // The stack's processes hold this MASTER_KEY: an endpoint made here is one they can sign for.
    const { vault } = stack;
    log('warm-up');
    await checkouts(stack, 5, 'warm', 3);
    type Phase = 'none' | 'paused' | 'endpoint';
    /**
     * One phase of checkouts. `endpoint`: one endpoint receiving every event type, delivered as
     * they come. `paused`: the same endpoint, but the outbound worker (this bench's own child) is
     * stopped with SIGSTOP for the checkouts and resumed after: the inbound path then pays only
     * for recording the events in its transactions, not for delivering them beside it.
     */
    const phase = async (kind: Phase, rate: number, tag: string) => {
      if (kind === 'none') {
        const endCpu = await cpuPhase(stack);
        const premium = await checkouts(stack, rate, tag, SECONDS);
        return { premium, cpu: await endCpu(), arrivals: [] as VerifiedArrival[], recorded: 0 };
      }
      const { row, secret: sk } = await withTenant(stack.db, stack.tenant.tenant_id, (trx) =>
        insertEndpoint(trx, vault, {
          tenantId: stack.tenant.tenant_id,
          url: rx.url,
          description: 'bench',
          eventTypes: [],
          taskQueue: stack.taskQueue,
        }),
      );
      secret = sk;
      rx.arrivals.length = 0;
      if (kind === 'paused') process.kill(stack.outboundWorker.pid, 'SIGSTOP');
      const endCpu = await cpuPhase(stack);
      let premium: number[];
      try {
        premium = await checkouts(stack, rate, tag, SECONDS);
      } finally {
        if (kind === 'paused') process.kill(stack.outboundWorker.pid, 'SIGCONT');
      }
      const cpu = await endCpu();
      // Every delivery recorded for the phase reaches the receiver (or the bench says how many did not).
      const expected = async () =>
        Number((await stack.db('outbound_deliveries').where({ endpoint_id: row.id }).count({ n: '*' }).first())!.n);
      const deadline = Date.now() + 180_000;
      while (rx.arrivals.length < (await expected()) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 100));
      const arrivals = [...rx.arrivals];
      const recorded = await expected();
      // Disabled, not deleted: the log stays, and the next phase runs without an endpoint that wants anything.
      await withTenant(stack.db, stack.tenant.tenant_id, (trx) =>
        trx('webhook_endpoints').where({ id: row.id }).update({ enabled: false }),
      );
      return { premium, cpu, arrivals, recorded };
    };
    const ORDER: Phase[] = ['none', 'paused', 'endpoint'];
    const ratios = new Map<string, number[]>();
    const median = (xs: number[]) => {
      const r = [...xs].sort((a, b) => a - b);
      return r.length % 2 ? r[(r.length - 1) / 2] : (r[r.length / 2 - 1] + r[r.length / 2]) / 2;
    };
    const busy = (c: Awaited<ReturnType<typeof phase>>['cpu']) =>
      (100 * c.machineBusyMs) / c.wallMs / (os.availableParallelism?.() ?? os.cpus().length);
    const cpuPerPurchase = (c: Awaited<ReturnType<typeof phase>>['cpu'], n: number, part?: string) =>
      (part ? c.parts[part] : Object.values(c.parts).reduce((a, b) => a + b, 0)) / n;
    for (let round = 1; round <= ROUNDS; round++) {
      // Rotated each round, so no phase always runs first or last.
      const order = ORDER.map((_, i) => ORDER[(i + round - 1) % ORDER.length]);
      for (const rate of RATES) {
        const tag = `${rate}_${round}`;
        log(`round ${round}, rate ${rate}/s: ${order.join(', ')}`);
        const got = {} as Record<Phase, Awaited<ReturnType<typeof phase>>>;
        for (const kind of order) got[kind] = await phase(kind, rate, `${kind[0]}${tag}`);
        const p50 = (k: Phase) => quantile(got[k].premium, 0.5);
        const lat = got.endpoint.arrivals.map((a) => a.arrivedAt - a.recordedAt).sort((a, b) => a - b);
        const n = rate * SECONDS;
        for (const k of ['paused', 'endpoint'] as const)
          ratios.set(`${rate}:${k}`, [...(ratios.get(`${rate}:${k}`) ?? []), p50(k) / p50('none')]);
        rows.push([
          `${rate}/s`,
          round,
          `${f0(p50('none'))} / ${f0(quantile(got.none.premium, 0.99))}`,
          `${f0(p50('paused'))} / ${f0(quantile(got.paused.premium, 0.99))}`,
          `${f0(p50('endpoint'))} / ${f0(quantile(got.endpoint.premium, 0.99))}`,
          `${(p50('paused') / p50('none')).toFixed(2)}×`,
          `${(p50('endpoint') / p50('none')).toFixed(2)}×`,
          `${f0(cpuPerPurchase(got.none.cpu, n))} / ${f0(cpuPerPurchase(got.paused.cpu, n))} / ${f0(cpuPerPurchase(got.endpoint.cpu, n))}`,
          f0(cpuPerPurchase(got.endpoint.cpu, n, 'outbound worker')),
          `${f0(busy(got.none.cpu))}% / ${f0(busy(got.endpoint.cpu))}%`,
          `${got.paused.arrivals.length + got.endpoint.arrivals.length}/${got.paused.recorded + got.endpoint.recorded}`,
          `${f0(quantile(lat, 0.5))} / ${f0(quantile(lat, 0.99))}`,
          rx.refused(),
        ]);
        log(JSON.stringify(rows.at(-1)));
      }
    }
    for (const rate of RATES)
      rows.push([
        `${rate}/s`,
        'median',
        '',
        '',
        '',
        `${median(ratios.get(`${rate}:paused`)!).toFixed(2)}×`,
        `${median(ratios.get(`${rate}:endpoint`)!).toFixed(2)}×`,
        '',
        '',
        '',
        '',
        '',
        '',
      ]);
  } finally {
    await rx.close();
    await stack.stop();
  }
  const m1 = machine(stack.pgVersion);
  const text = `Run: ${m0.date} · ${m1.nproc} cores (${m1.cpuModel}), ${m1.memoryGiB} GiB · Node ${m1.node} · Postgres ${m1.postgres} · load average before: ${m0.loadavg}, after: ${m1.loadavg}. The machine is shared and noisy: read the times against the load average.

psp_a checkouts (three signed events each) at a fixed rate for ${SECONDS} s per phase; api, worker and outbound worker as their own processes, as \`npm start\` runs them. Per rate and round, three phases side by side, their order rotated each round (${ROUNDS} rounds): **none**, no webhook endpoint; **paused**, one endpoint receiving every event type while the outbound worker is stopped (SIGSTOP) and resumed after the phase, so the inbound path pays only for recording events in its own transactions; **endpoint**, the same endpoint delivered as events come. Payment → premium: checkout due → entitlement active (20 ms watcher). Event → delivery: the event's timestamp (Postgres, in the state change's transaction) → arrival at the receiver, which verifies every delivery with the standardwebhooks library. CPU: every process of the stack and the database's Postgres backends, from /proc, per purchase; machine busy: everyone's work, % of the ${m1.nproc} cores.

${table(['rate', 'round', 'premium p50 / p99 ms, none', 'paused', 'endpoint', 'p50 ratio paused ÷ none', 'endpoint ÷ none', 'stack CPU ms per purchase, none / paused / endpoint', 'of which outbound worker (endpoint)', 'machine busy, none / endpoint', 'delivered', 'event → delivery p50 / p99 ms', 'signature refused'], rows)}`;
  writeResults('outbound-latency.ts', 'Outbound webhooks: event → tenant delivery (bench/outbound-latency.ts)', text);
  log('written to bench/RESULTS.md');
}

runBench(main);
