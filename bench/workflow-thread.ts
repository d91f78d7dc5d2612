/**
 * The worker's workflow thread alone, per checkout: a dev server, one worker in this process with
 * a no-op `writeLifecycle`, and a checkout's hand-over (the three events of a purchase in one
 * signal-with-start of a new `customerLifecycleWorkflow`) at a fixed rate. Reports the CPU of the
 * workflow thread, of this process's main thread and of the whole process per checkout (from
 * /proc), so a change to the bundle or to the workflow code can be compared without the api,
 * Postgres and the emulator around it (bench/payment-to-premium.ts measures the whole path; this
 * process also runs the client, so its main thread is not the worker's alone).
 *
 *   npx tsx bench/workflow-thread.ts [--rate 20] [--seconds 30] [--no-preload] [--empty-map]
 *       [--devtool inline-cheap-source-map] [--count]
 *
 * The bundle is made as production makes it (temporal/worker.ts, WORKFLOW_PRELOAD_MODULES), or:
 * `--no-preload` without the preloaded workflow code (every new workflow evaluates it again);
 * `--empty-map` with the bundle's source map emptied of mappings (what the SDK's source-map lookup
 * of every stack frame costs; such a bundle's traces read `null:null:null`, measurement only);
 * `--devtool` with another webpack source map. `--count` runs the workflows on this thread (the
 * SDK's debugMode) and counts, per checkout, the promises made in workflow context (the SDK
 * records a stack for each) and the calls into the sandbox (each starts node's `vm` watchdog);
 * with WFT_WHERE=1 it also lists where the promises are made.
 */
import v8 from 'node:v8';
import vm from 'node:vm';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import { startDevServer } from '../temporal/dev-server';
import { freePort } from '../runtime/ports';
import { WORKFLOW_PRELOAD_MODULES, WORKFLOWS_PATH } from '../temporal/worker';
import { signalLifecycleBatch } from '../temporal/workflow-starts';
import type { LifecycleEvent } from '../domain/subscription';
import { threadWindow } from './lib/cpu';
import { arg } from './lib/args';

const RATE = Number(arg('rate', '20'));
const SECONDS = Number(arg('seconds', '30'));
const DEVTOOL = arg('devtool', '');
const PRELOAD = !process.argv.includes('--no-preload');
const EMPTY_MAP = process.argv.includes('--empty-map');
const COUNT = process.argv.includes('--count');
const WARM_UP = 40;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let promises = 0;
let sandboxCalls = 0;
const where = new Map<string, number>();
if (COUNT) {
  // Measurement only, on this thread: a promise whose constructor is not this realm's Promise was made in the sandbox.
  v8.promiseHooks.onInit((p) => {
    if ((p as object).constructor === Promise) return;
    promises++;
    if (!process.env.WFT_WHERE) return;
    const frames = (new Error().stack ?? '').split('\n').slice(2, 7);
    const k = frames
      .map((l) =>
        l
          .trim()
          .replace(/^at (async )?/, '')
          .replace(/ \(.*\)$/, ''),
      )
      .join(' < ');
    where.set(k, (where.get(k) ?? 0) + 1);
  });
  const run = vm.Script.prototype.runInContext;
  vm.Script.prototype.runInContext = function (this: vm.Script, ...a: Parameters<typeof run>) {
    sandboxCalls++;
    return run.apply(this, a);
  };
}

/** A checkout as the webhook outbox hands it over: payment, subscription, invoice. */
function checkout(i: number): LifecycleEvent[] {
  const t = Date.now();
  const at = (ms: number) => new Date(t + ms).toISOString();
  const base = { mode: 'test' as const, customer_id: `cus_${i}`, app_user_id: `user_${i}`, sku: 'pro_monthly' };
  return [
    { ...base, id: `evt_pi_${i}`, kind: 'payment_succeeded', occurred_at: at(0), subscription_id: null },
    {
      ...base,
      id: `evt_sub_${i}`,
      kind: 'subscription_created',
      occurred_at: at(1),
      subscription_id: `sub_${i}`,
      current_period_end: at(30 * 86400_000),
    },
    { ...base, id: `evt_inv_${i}`, kind: 'payment_succeeded', occurred_at: at(2), subscription_id: `sub_${i}` },
  ];
}

const customer = (key: string) => ({
  tenantId: '00000000-0000-4000-8000-000000000001',
  provider: 'psp_a',
  customerKey: key,
});

function withEmptyMappings(code: string): string {
  const at = code.lastIndexOf('//# sourceMappingURL=data:');
  const b64 = code.slice(code.indexOf('base64,', at) + 'base64,'.length).trim();
  const map = { ...JSON.parse(Buffer.from(b64, 'base64').toString()), mappings: '' };
  return `${code.slice(0, at)}//# sourceMappingURL=data:application/json;base64,${Buffer.from(JSON.stringify(map)).toString('base64')}`;
}

const port = await freePort();
const server = await startDevServer({ port, uiPort: null });
try {
  const address = `127.0.0.1:${port}`;
  const bundled = await bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    ...(PRELOAD ? { preloadModules: WORKFLOW_PRELOAD_MODULES } : {}),
    ...(DEVTOOL ? { webpackConfigHook: (c) => ({ ...c, devtool: DEVTOOL }) } : {}),
  });
  const code = EMPTY_MAP ? withEmptyMappings(bundled.code) : bundled.code;
  const taskQueue = `wft-${Date.now()}`;
  let writes = 0;
  const worker = await Worker.create({
    connection: await NativeConnection.connect({ address }),
    taskQueue,
    workflowBundle: { code },
    activities: { writeLifecycle: async () => void writes++ },
    ...(COUNT ? { debugMode: true } : {}),
  });
  const running = worker.run();
  const client = new Client({ connection: await Connection.connect({ address }) });
  // Warm-up: the first workflows compile the bundle's functions.
  for (let i = 0; i < WARM_UP; i++) await signalLifecycleBatch(client, taskQueue, customer(`w${i}`), checkout(i));
  while (writes < WARM_UP) await sleep(20);
  await sleep(1000);
  const n = Math.round(RATE * SECONDS);
  const end = threadWindow(process.pid);
  const [p0, c0] = [promises, sandboxCalls];
  const started = performance.now();
  const sent: Promise<unknown>[] = [];
  for (let i = 0; i < n; i++) {
    const wait = started + (i * 1000) / RATE - performance.now();
    if (wait > 0) await sleep(wait);
    sent.push(signalLifecycleBatch(client, taskQueue, customer(`c${i}`), checkout(i)));
  }
  await Promise.all(sent);
  while (writes < WARM_UP + n) await sleep(20);
  await sleep(1500); // the task after the write follows within a few ms
  const threads = end();
  // Node names its worker threads like its main thread: the workflow thread is the busiest of them.
  const workflowThread = Math.max(
    0,
    ...Object.entries(threads).flatMap(([k, v]) => (k.startsWith('node thread') ? [v] : [])),
  );
  const per = (x: number) => (x / n).toFixed(2);
  console.log(
    JSON.stringify({
      preload: PRELOAD,
      map: EMPTY_MAP ? 'empty' : DEVTOOL || 'inline-source-map',
      checkouts: n,
      bundleKB: Math.round(code.length / 1024),
      ...(COUNT
        ? { promisesPerCheckout: per(promises - p0), sandboxCallsPerCheckout: per(sandboxCalls - c0) }
        : { workflowThreadMs: per(workflowThread) }),
      mainThreadMs: per(Object.entries(threads).find(([k]) => k.endsWith('(main)'))?.[1] ?? 0),
      processMs: per(Object.values(threads).reduce((a, b) => a + b, 0)),
    }),
  );
  if (process.env.WFT_WHERE)
    for (const [k, c] of [...where].sort((a, b) => b[1] - a[1]).slice(0, 30))
      console.log((c / (n + WARM_UP)).toFixed(2), k);
  await worker.shutdown();
  await running;
} finally {
  await server.stop();
}
