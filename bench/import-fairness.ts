/**
 * One tenant's imports against another tenant's store registrations (issue 42, item 5). Tenant A
 * runs the most imports it may at once (one per provider: a Play token file, an App Store file
 * and a RevenueCat export), every lookup paced under the store's documented limit (the App Store
 * emulator enforces it), so each page waits on the pacer while it holds a turn; tenant B meanwhile
 * registers Play purchases through the SDK endpoint (POST /v1/sdk/store-purchases, a workflow and
 * a store call each), one after another. B's registration latency before A starts and while A's
 * imports run, against the bound stated below, and the most turns A held at once
 * (tenant_work_leases). One process runs the API and the worker (the sync benches' stack).
 *
 *   DATABASE_URL=postgres://… npx tsx bench/import-fairness.ts [--play 300] [--ios 60] [--registrations 20]
 */
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { attachToApp } from '../db/app-providers';
import { markConnectionProven } from '../db/connection-service';
import { withTenant } from '../db/tenant-tx';
import { WORK_TURNS_PER_TENANT } from '../domain/import-concurrency';
import { numArg } from './lib/args';
import { f0, machine, table } from './lib/report';
import { runBench } from './lib/run';
import { writeGeneratedBlock } from './lib/section';
import { api, startSyncStack, type BenchTenant, type SyncStack } from './lib/sync-stack';

const PLAY = numArg('play', 300);
const IOS = numArg('ios', 60);
const REGISTRATIONS = numArg('registrations', 20);
const HERE = path.dirname(fileURLToPath(import.meta.url));
const log = (m: string) => console.log(`[import-fairness] ${m}`);
/** The bound: B's p99 while A imports at most twice its p99 alone, plus half a second. */
const bound = (aloneP99: number) => 2 * aloneP99 + 500;

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] : NaN;
};

async function storeTenant(stack: SyncStack, name: string): Promise<BenchTenant & { pk: string }> {
  const t = await stack.tenant({ name, providers: ['store_android', 'store_ios'], modes: ['test'], products: 1 });
  await withTenant(stack.db, t.tenantId, async (trx) => {
    for (const c of await trx('provider_connections').select('id'))
      await markConnectionProven(trx, c.id, 'control_api');
    const app = await trx('apps').first('id');
    await attachToApp(trx, app.id, 'store_android');
    await attachToApp(trx, app.id, 'store_ios');
  });
  const app = await stack.db('apps').where({ tenant_id: t.tenantId }).first('publishable_key_test');
  return { ...t, pk: app.publishable_key_test as string };
}

async function main() {
  const stack = await startSyncStack(log);
  const loadBefore = os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
  try {
    const a = await storeTenant(stack, 'bench-fair-a');
    const b = await storeTenant(stack, 'bench-fair-b');
    const play = async (t: BenchTenant, user: string) =>
      (
        await stack.control('store_android', 'POST', '/sandbox-purchase', {
          product_id: 'bench-0',
          account: t.accounts.store_android!.account,
          app_user_id: user,
        })
      ).purchase_token as string;
    const ios = async (user: string) =>
      (
        await stack.control('store_ios', 'POST', '/sandbox-purchase', {
          product_id: 'com.example.bench.p0',
          account: a.accounts.store_ios!.account,
          app_user_id: user,
        })
      ).transaction_id as string;
    const aTokens: string[] = [];
    for (let i = 0; i < PLAY; i++) aTokens.push(await play(a, `a_play_${i}`));
    const aTx: string[] = [];
    for (let i = 0; i < IOS; i++) aTx.push(await ios(`a_ios_${i}`));
    const bTokens: string[] = [];
    for (let i = 0; i < 2 * REGISTRATIONS; i++) bTokens.push(await play(b, `b_play_${i}`));
    log(`seeded ${PLAY} Play and ${IOS} App Store purchases for A, ${2 * REGISTRATIONS} Play purchases for B`);
    // A's App Store lookups wait on the sandbox's 5 a second, so its App Store and RevenueCat pages hold their turns
    // for seconds. Play's limit stays off at the emulator: it counts every account's calls in one bucket, so A's
    // lookups would spend B's own allowance there, which two Google Cloud projects do not share (our pacer, per
    // account, still paces A's Play lookups at Play's documented 3,000 a minute).
    await stack.control('store_ios', 'POST', '/rate-limit', { enabled: true });

    const root = stack.apiUrl.replace(/\/v1$/, '');
    const register = async (i: number) => {
      // The bench's one address would meet the per-address registration limit: B's buckets start full each time.
      await stack.db('client_rate_limit_buckets').where({ tenant_id: b.tenantId }).del();
      const t = performance.now();
      const res = await fetch(`${root}/v1/sdk/store-purchases`, {
        method: 'POST',
        headers: { authorization: `Bearer ${b.pk}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          app_user_id: `b_play_${i}`,
          provider: 'store_android',
          product_id: 'bench-0',
          purchase_token: bTokens[i],
        }),
      });
      await res.text();
      if (res.status !== 200) throw new Error(`registration answered ${res.status}`);
      return performance.now() - t;
    };
    const alone: number[] = [];
    for (let i = 0; i < REGISTRATIONS; i++) alone.push(await register(i));

    const files = [
      {
        provider: 'store_android',
        csv: ['purchase_token,app_user_id', ...aTokens.map((t, i) => `${t},a_play_${i}`)].join('\n'),
      },
      {
        provider: 'store_ios',
        csv: ['original_transaction_id,app_user_id', ...aTx.map((t, i) => `${t},a_ios_${i}`)].join('\n'),
      },
      {
        format: 'revenuecat',
        csv: [
          'rc_original_app_user_id,store,original_store_transaction_id',
          ...aTx.map((t, i) => `a_ios_${i},app_store,${t}`),
        ].join('\n'),
      },
    ];
    const started = [];
    for (const body of files) {
      const r = await api(stack.apiUrl, '/imports', a.key, { method: 'POST', body: JSON.stringify(body) });
      if (r.status !== 202) throw new Error(`import answered ${r.status} ${JSON.stringify(r.body)}`);
      started.push(r.body.id as string);
    }
    let maxTurns = 0;
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        const [{ n }] = await stack
          .db('tenant_work_leases')
          .where({ tenant_id: a.tenantId })
          .where('lease_until', '>', stack.db.fn.now())
          .count<{ n: string }[]>('* as n');
        maxTurns = Math.max(maxTurns, Number(n));
        await new Promise((r) => setTimeout(r, 250));
      }
    })();
    const during: number[] = [];
    for (let i = REGISTRATIONS; i < 2 * REGISTRATIONS; i++) during.push(await register(i));
    const running = Number(
      (await stack.db('imports').where({ tenant_id: a.tenantId, status: 'running' }).count('* as n'))[0].n,
    );
    watching = false;
    await watcher;

    const m = machine(stack.pgVersion);
    const p99Alone = pct(alone, 99);
    const p99During = pct(during, 99);
    const body = [
      `Run: ${m.date} · ${m.nproc} cores (${m.cpuModel}), ${m.memoryGiB} GiB · Node ${m.node} · Postgres ${m.postgres} · load average before: ${loadBefore}, after: ${m.loadavg}. The machine is shared and noisy: read the times against the load average.`,
      '',
      `Tenant A imports ${PLAY} Play tokens, ${IOS} App Store transactions and a RevenueCat export of the same ${IOS} at once (its maximum: one running import per provider), lookups paced under the emulators' enforced limits; tenant B registers ${REGISTRATIONS} Play purchases one after another alone, then ${REGISTRATIONS} while A's imports run (${running} of A's 3 still running when B's last answered). Worker: ${stack.workerSlots} activity slots; A's share ${WORK_TURNS_PER_TENANT} turns, most held at once: ${maxTurns}.`,
      '',
      table(
        ['B registrations', 'n', 'p50 (ms)', 'p99 (ms)', 'max (ms)'],
        [
          ['alone', alone.length, f0(pct(alone, 50)), f0(p99Alone), f0(Math.max(...alone))],
          ["while A's imports run", during.length, f0(pct(during, 50)), f0(p99During), f0(Math.max(...during))],
        ],
      ),
      '',
      `Bound: B's p99 while A imports ≤ 2 × its p99 alone + 500 ms = ${f0(bound(p99Alone))} ms: ${p99During <= bound(p99Alone) ? 'held' : 'NOT held'}.`,
    ].join('\n');
    console.log(body);
    writeGeneratedBlock(
      path.join(HERE, 'RESULTS.md'),
      'bench/import-fairness.ts',
      "## One tenant's imports against another's store registrations (bench/import-fairness.ts)",
      body,
    );
  } finally {
    await stack.close();
  }
}

runBench(main);
