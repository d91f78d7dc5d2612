/**
 * The drift report at scale: GET /v1/sync for a tenant with 1,000 products, connected to all
 * five providers (the web ones in test and live mode, the stores in one), whose catalogues hold
 * those 1,000 products, each emulator adding 20 ms of latency. Aim: under 2 s. Real API,
 * worker, Temporal dev server and Postgres; provider reads go through the paced adapters as in
 * production. The catalogues are seeded straight through the adapters' create calls (not a
 * drain: a paced drain of 1,000 products at Paddle's 4 calls/s would take most of an hour).
 *
 *   DATABASE_URL=postgres://… npx tsx bench/drift-report.ts [--products 1000] [--latency 20] [--runs 5]
 */
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { withTenant } from '../db/tenant-tx';
import { loadProductSpec } from '../db/sync-facts';
import { PROVIDERS, isStoreProvider, type Mode, type ProviderId } from '../domain/providers';
import { createAdapters } from '../providers';
import { paddleRequest } from '../providers/psp_b/http';
import { productBody } from '../providers/psp_b/catalog';
import { RazorpayClient } from '../providers/psp_c/client';
import { primaryPrice } from '../providers/psp_c/catalogue';
import type { ProductSpec, ProviderContext } from '../providers/types';
import { machine, table, f0 } from './lib/report';
import { writeGeneratedBlock } from './lib/section';
import { api, startSyncStack } from './lib/sync-stack';
import { runBench } from './lib/run';
import { numArg } from './lib/args';

const PRODUCTS = numArg('products', 1000);
const LATENCY = numArg('latency', 20);
const RUNS = numArg('runs', 5);
const HERE = path.dirname(fileURLToPath(import.meta.url));
const log = (m: string) => console.log(`[drift-report] ${m}`);

async function inParallel<T>(items: T[], lanes: number, fn: (x: T) => Promise<unknown>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (next < items.length) await fn(items[next++]);
    }),
  );
}

/** One create per product at the provider (no list-before-create: the catalogue starts empty). */
async function seed(
  provider: ProviderId,
  ctx: ProviderContext,
  specs: ProductSpec[],
  adapters: ReturnType<typeof createAdapters>,
) {
  const create = async (spec: ProductSpec) => {
    if (provider === 'psp_b') return paddleRequest(ctx, 'POST', '/products', { body: productBody(spec) });
    if (provider === 'psp_c') {
      const price = primaryPrice(spec);
      return new RazorpayClient(ctx).call('POST', '/v1/items', {
        body: {
          name: spec.name,
          description: spec.sku,
          amount: price?.amount_minor ?? 100,
          currency: price?.currency ?? 'INR',
          notes: { product_id: spec.product_id, sku: spec.sku, tenant_id: spec.tenant_id },
        },
      });
    }
    return adapters[provider].upsertProduct(ctx, spec, `bench-seed:${provider}:${ctx.mode}:${spec.product_id}`);
  };
  await inParallel(specs, 8, create);
}

const quantile = (xs: number[], q: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];

async function main() {
  const stack = await startSyncStack(log);
  const loadBefore = os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
  try {
    const t = await stack.tenant({
      name: 'bench-drift',
      providers: PROVIDERS,
      modes: ['test', 'live'],
      products: PRODUCTS,
      locales: [
        ['US', 'USD'],
        ['DE', 'EUR'],
      ],
    });
    const ids: string[] = (await stack.db('products').where({ tenant_id: t.tenantId }).select('id')).map(
      (r: { id: string }) => r.id,
    );
    const specs = await withTenant(stack.db, t.tenantId, async (trx) =>
      Promise.all(ids.map((id) => loadProductSpec(trx, t.tenantId, id))),
    );
    const adapters = createAdapters({
      providerBaseUrls: Object.fromEntries(PROVIDERS.map((p) => [p, stack.emulators[p].url])) as Record<
        ProviderId,
        string
      >,
    });
    const s0 = performance.now();
    await Promise.all(
      PROVIDERS.flatMap((p) =>
        (isStoreProvider(p) ? (['live'] as Mode[]) : (['test', 'live'] as Mode[])).map((mode) => {
          const acct = t.accounts[p]!;
          const ctx: ProviderContext = {
            baseUrl: stack.emulators[p].url,
            mode,
            credential: acct.credentials[mode],
            accountRef: acct.account,
            timeoutMs: 120_000,
          };
          return seed(p, ctx, specs as ProductSpec[], adapters);
        }),
      ),
    );
    log(`seeded ${PRODUCTS} products at 8 catalogues in ${((performance.now() - s0) / 1000).toFixed(1)} s`);
    for (const p of PROVIDERS) await stack.control(p, 'POST', '/faults', { mode: 'latency', ms: LATENCY });

    const times: number[] = [];
    let findings = 0;
    for (let r = 0; r < RUNS + 1; r++) {
      const a = performance.now();
      const res = await api(stack.apiUrl, '/sync', t.key);
      const ms = performance.now() - a;
      if (res.status !== 200) throw new Error(`GET /sync → ${res.status} ${JSON.stringify(res.body).slice(0, 400)}`);
      findings = res.body.confirm_count;
      log(`${r === 0 ? 'warm-up' : `run ${r}`}: ${ms.toFixed(0)} ms, ${findings} findings`);
      if (r > 0) times.push(ms);
    }
    const m = machine(stack.pgVersion);
    const p50 = quantile(times, 0.5);
    const body = [
      `Run: ${m.date} · ${m.nproc} cores (${m.cpuModel}), ${m.memoryGiB} GiB · Node ${m.node} · Postgres ${m.postgres} · load average before: ${loadBefore}, after: ${m.loadavg}. The machine is shared and noisy: read the times against the load average.`,
      '',
      `GET /v1/sync for one tenant with ${PRODUCTS} products (2 prices each), connected to all five providers: 8 catalogues to read (psp_a, psp_b, psp_c in test and live, the two stores in one mode), each holding the ${PRODUCTS} products, ${LATENCY} ms added latency per provider call. Reads are paced to each provider's documented limit, as in production. One warm-up, then ${RUNS} reports in sequence.`,
      '',
      table(
        ['measure', 'ms'],
        [
          ['median', f0(p50)],
          ['min', f0(Math.min(...times))],
          ['max', f0(Math.max(...times))],
          ['all runs', times.map(f0).join(', ')],
        ],
      ),
      '',
      `**GET /v1/sync: ${f0(p50)} ms median (aim < 2,000 ms)**, ${findings} findings per report.`,
    ].join('\n');
    writeGeneratedBlock(
      path.join(HERE, 'RESULTS.md'),
      'bench/drift-report.ts',
      '## Drift report at 1,000 products × 5 providers (bench/drift-report.ts)',
      body,
    );
    console.log(body);
  } finally {
    await stack.close();
  }
}

runBench(main);
