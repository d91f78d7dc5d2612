import fs from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker } from '@temporalio/worker';
import { Context } from '@temporalio/activity';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { Resource } from '@opentelemetry/resources';
import { createActivities, type ActivityDeps } from '../activities';
import { logger } from '../runtime/logger';
import { dataConverterFor } from './payload-codec';
import { signalLifecycleBatch } from './workflow-starts';
import { ensureTenantReconciliationSchedules } from './reconciliation-schedules';
import { presetBuildIdsInterceptor } from './build-ids';

export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

/**
 * Evaluated once per worker thread and shared by every workflow (the SDK's `preloadModules`), instead
 * of once per new workflow: every checkout starts a new customer workflow, which otherwise ran the
 * module code of all our workflows, the domain rules and the SDK's own index again (docs/temporal.md,
 * "The workflow thread's CPU"). Safe because these modules keep no state of their own at module level:
 * constants, pure functions and the SDK's proxies and definitions, which look the running workflow up
 * when called. The SDK freezes what they export. A module-level variable that changes would now be
 * shared between workflows: docs/temporal.md says what not to write there.
 */
export const WORKFLOW_PRELOAD_MODULES = [WORKFLOWS_PATH];

/**
 * `npm run build` bundles the workflow code twice, beside dist/temporal/: without the tracing
 * interceptors (tracing off, the default: workflows and their histories exactly as before) and
 * with them (tracing on). The worker picks one at start.
 */
export const WORKFLOW_BUNDLES = { plain: 'workflow-bundle.js', traced: 'workflow-bundle-traced.js' } as const;
const bundlePath = (name: string) => fileURLToPath(new URL(`../${name}`, import.meta.url));

/**
 * The workflow interceptors that continue the trace a workflow was started or signalled with
 * (the client interceptor puts it in the headers) into its activities; their spans leave the
 * sandbox through the `exporter` sink. Only when tracing is on: they add a plaintext
 * `_tracer-data` header (a W3C trace context) to every activity in the history.
 */
const WORKFLOW_INTERCEPTOR_MODULES = ['@temporalio/interceptors-opentelemetry/lib/workflow-interceptors'];

/**
 * What every bundle of our workflow code is made from (the build's two, the tests' one, a worker
 * bundling at start): the workflows, preloaded, and with tracing the interceptor modules. One
 * place, so no bundle silently lacks one of them.
 */
export function workflowBundleOptions(traced: boolean): {
  workflowsPath: string;
  preloadModules: string[];
  workflowInterceptorModules: string[];
} {
  const require = createRequire(import.meta.url);
  return {
    workflowsPath: WORKFLOWS_PATH,
    preloadModules: WORKFLOW_PRELOAD_MODULES,
    workflowInterceptorModules: traced ? WORKFLOW_INTERCEPTOR_MODULES.map((m) => require.resolve(m)) : [],
  };
}

export interface WorkerOptions {
  address: string;
  namespace: string;
  taskQueue: string;
  deps: ActivityDeps;
  /** Tracing on (runtime/tracing.ts): where workflow spans go. Absent, no tracing interceptor runs. */
  tracing?: { spanProcessor: SpanProcessor; resource: Resource };
  /** Activities run at once (WORKER_MAX_ACTIVITIES when absent); the outbound worker sets its drains' bound. */
  maxConcurrentActivityTaskExecutions?: number;
  /**
   * A workflow bundle already made from these sources (bundleWorkflowCode), used when no build
   * bundle is beside the code and tracing is off: the tests make one per run instead of one per
   * worker they start (a worker process reads it from WORKFLOW_BUNDLE_PATH).
   */
  workflowBundlePath?: string;
}

/**
 * A worker on `taskQueue` with every workflow and activity (one bundle for both processes). The
 * inbound worker is this on the deployment's queue; the outbound worker
 * (temporal/outbound-worker.ts) is this on the outbound queue, plus the outbox dispatcher.
 */
export async function createWorker(opts: WorkerOptions): Promise<{ worker: Worker; connection: NativeConnection }> {
  const connection = await NativeConnection.connect({ address: opts.address });
  const { tracing } = opts;
  const bundle = bundlePath(tracing ? WORKFLOW_BUNDLES.traced : WORKFLOW_BUNDLES.plain);
  // Compiled (node dist/…): the code bundled once at build time; from sources (dev): bundled now, unless
  // the caller hands over a bundle of these sources (the tests' one per run).
  const prebuilt = !tracing && opts.workflowBundlePath ? opts.workflowBundlePath : undefined;
  const sources = workflowBundleOptions(!!tracing);
  const code = fs.existsSync(bundle)
    ? { workflowBundle: { codePath: bundle } }
    : prebuilt
      ? { workflowBundle: { codePath: prebuilt } }
      : {
          workflowsPath: sources.workflowsPath,
          bundlerOptions: { preloadModules: sources.preloadModules },
          interceptors: { workflowModules: sources.workflowInterceptorModules },
        };
  const worker = await Worker.create({
    connection,
    namespace: opts.namespace,
    taskQueue: opts.taskQueue,
    // No build named: we do not use worker versioning, and a named build would change the workflow's `BuildIds`
    // on its first task, a second visibility write per new workflow (temporal/build-ids.ts).
    buildId: '',
    ...code,
    interceptors: {
      ...('interceptors' in code ? code.interceptors : {}),
      // What activities start through the worker's own client (an import's hand-overs) carries the preset too.
      client: { workflow: [presetBuildIdsInterceptor()] },
      ...(tracing
        ? {
            activity: [
              (ctx: Context) => ({
                inbound: new OpenTelemetryActivityInboundInterceptor(ctx),
                outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
              }),
            ],
          }
        : {}),
    },
    ...(tracing ? { sinks: { exporter: makeWorkflowExporter(tracing.spanProcessor, tracing.resource) } } : {}),
    activities: createActivities({
      ...opts.deps,
      // An import hands each subscription to its customer's workflow with the worker's own client, on this queue.
      handOverLifecycle:
        opts.deps.handOverLifecycle ??
        (async (customer, events) => {
          await signalLifecycleBatch(Context.current().client, opts.taskQueue, customer, events);
        }),
      // A proof ensures the tenant's reconciliation schedules, on the deployment's queue (not the outbound one).
      ensureReconciliationSchedules:
        opts.deps.ensureReconciliationSchedules ??
        (async (tenantId) => {
          await ensureTenantReconciliationSchedules(
            Context.current().client,
            opts.deps.config.taskQueue,
            opts.deps.db,
            tenantId,
          );
        }),
    }),
    // Every slot count set, never the SDK's unstated defaults (docs/limits.md, "The worker"); the outbound worker
    // bounds its activities by its drains.
    maxConcurrentActivityTaskExecutions:
      opts.maxConcurrentActivityTaskExecutions ?? opts.deps.config.workerSlots.activities,
    maxConcurrentWorkflowTaskExecutions: opts.deps.config.workerSlots.workflowTasks,
    maxConcurrentLocalActivityExecutions: opts.deps.config.workerSlots.localActivities,
    // Payloads at rest are ciphertext under MASTER_KEY (the vault's ring, derived for payloads),
    // bound to their workflow; what else is read is the operator's upgrade switch. A refusal fails
    // the task, and is counted and logged here, where the task runs.
    dataConverter: dataConverterFor(opts.deps.vault, { policy: opts.deps.config.temporalPayloads, log: logger }),
  });
  return { worker, connection };
}
