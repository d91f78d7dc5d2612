import {
  allHandlersFinished,
  condition,
  defineQuery,
  defineUpdate,
  log,
  proxyActivities,
  setHandler,
} from '@temporalio/workflow';
import { providerFailureOf, type ProviderErrorClass } from './activity-failure';
import type { Activities } from '../activities';
import type { PlanOrRefusal, ProviderSnapshot, TargetSnapshot } from '../activities/sync';
import type { ProviderId, SyncTarget } from '../domain/providers';
import { syncConcurrency } from '../domain/rate-limits';
import type { DriftFinding } from '../domain/drift';
import {
  driftIncomplete,
  runEvents,
  syncTargets,
  unreadTargets,
  workedEvent,
  type ProviderWork,
  type RunPlan,
  type SyncEvent,
  type SyncOutcome,
  type SyncRefusal,
} from '../domain/sync-plan';

/** Reads for drift: a short, bounded retry, then the provider counts as unreachable. */
const { readProviderSnapshot } = proxyActivities<Activities>({
  startToCloseTimeout: '20 seconds',
  retry: { initialInterval: '300 milliseconds', maximumInterval: '2 seconds', maximumAttempts: 3 },
});
/** Writes: retried with backoff on unreachable and 429 (the failure carries Retry-After); a refusal is final. */
const { syncProductAt, ensureLinkAt } = proxyActivities<Activities>({
  startToCloseTimeout: '15 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 6 },
});
/** Reading our side and planning: a few queries, longer for a large catalogue; retried until done. */
const { loadSyncSetup, planDrainRun, planProductSyncRun } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '10 seconds' },
});
const { recordSyncEvent, finishSyncRun } = proxyActivities<Activities>({
  startToCloseTimeout: '15 seconds',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '10 seconds' },
});

export type ErrorClass = ProviderErrorClass;
const failureOf = providerFailureOf;

export interface SnapshotOutcome {
  target: SyncTarget;
  snapshot: ProviderSnapshot | null;
  error_class: ErrorClass | null;
  reason: string | null;
}

/** Read every sync target in parallel (one activity each); failures become verdicts, never a partial answer. */
function readSnapshots(tenantId: string, targets: SyncTarget[]): Promise<SnapshotOutcome[]> {
  return Promise.all(
    targets.map(async (target): Promise<SnapshotOutcome> => {
      try {
        return { target, snapshot: await readProviderSnapshot({ tenantId, target }), error_class: null, reason: null };
      } catch (err) {
        return { target, snapshot: null, ...failureOf(err) };
      }
    }),
  );
}

/** The drift read behind GET /v1/sync (a POST reads inside its own run). */
export async function driftSnapshotWorkflow(input: {
  tenantId: string;
  targets: SyncTarget[];
}): Promise<SnapshotOutcome[]> {
  return readSnapshots(input.tenantId, input.targets);
}

/**
 * A drain's first steps: read every provider, then gate and plan. Unread providers refuse the run (nothing written).
 */
async function gateAndPlanDrain(input: Extract<SyncRunInput, { kind: 'sync' }>): Promise<PlanOrRefusal> {
  const setups = await loadSyncSetup({ tenantId: input.tenantId });
  const outcomes = await readSnapshots(input.tenantId, syncTargets(setups));
  const incomplete = driftIncomplete(unreadTargets(outcomes));
  if (incomplete) return incomplete;
  const snapshots: TargetSnapshot[] = outcomes.map((o) => ({ target: o.target, snapshot: o.snapshot! }));
  return planDrainRun({
    tenantId: input.tenantId,
    runId: input.runId,
    requestedBy: input.requestedBy,
    confirmCount: input.confirmCount,
    setups,
    snapshots,
  });
}

export type { SyncOutcome } from '../domain/sync-plan';

/**
 * What starts a run. `sync` (POST /v1/sync): the workflow reads the providers, judges drift,
 * checks the caller's confirm count and takes the drain lock before any write. `product-sync`
 * (POST /v1/products/{id}/sync): one product, optionally one provider; the API found the product.
 */
export type SyncRunInput =
  | { tenantId: string; runId: string; kind: 'sync'; requestedBy: string | null; confirmCount: number | null }
  | {
      tenantId: string;
      runId: string;
      kind: 'product-sync';
      requestedBy: string | null;
      product: { productId: string; sku: string };
      only?: ProviderId;
    };

/** Per provider and mode: what a product sync answers. */
export interface ProviderVerdict {
  provider: string;
  mode: string;
  ok: boolean;
  synced: number;
  detail: string;
}

export interface SyncRunResult {
  ok: boolean;
  synced: number;
  priced_locales: number;
  skipped: SyncOutcome[];
  failed: SyncOutcome[];
  needs_human: DriftFinding[];
  run_id: string;
  verdicts: ProviderVerdict[];
}

/** A run either ran (its result) or was refused before any write (why). */
export type SyncRunAnswer = SyncRunResult | SyncRefusal;

/** The gate's answer, as soon as it is known: accepted (the run goes on), or the refusal the run ends with. */
export type GateAnswer = { accepted: true } | SyncRefusal;
export const gateUpdate = defineUpdate<GateAnswer>('gate');

export type SyncProgress = Record<string, { done: number; total: number }>;
export const progressQuery = defineQuery<SyncProgress>('progress');

/**
 * Run `fn` over `items` with at most `lanes` at once, in order of the list; `go()` false stops
 * taking new items (a provider that stayed unreachable). Deterministic: plain promises.
 */
async function inLanes<T>(items: T[], lanes: number, go: () => boolean, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(lanes, items.length) }, async () => {
      while (next < items.length && go()) await fn(items[next++]);
    }),
  );
}

/**
 * One sync run (`sync-<tenant>-<run_id>` or `product-sync-<tenant>-<run_id>`). First the gate: a drain reads
 * every provider, judges drift and checks the caller's confirm count; both kinds then take the
 * tenant's drain lock and plan. The gate's answer is also the `gate` update's, so an API that
 * answers 202 at once still answers a refusal with its code; a refused run writes nothing.
 * Then providers and their modes in parallel; within one provider and mode, products (each
 * with its prices) first and then the apps' links, a few at a time (syncConcurrency, from the
 * provider's documented rate limit). The activities pace every provider call to that limit
 * (providers/pacing.ts) and a 429 is retried after the provider's delay, so the lanes only keep
 * the allowance busy. A refused write fails that unit and the run goes on; a provider that
 * stays unreachable fails its remaining work. One sync event per provider the run checked,
 * also when it had nothing to do; the run row is closed last, which releases the lock.
 */
export async function syncRunWorkflow(input: SyncRunInput): Promise<SyncRunAnswer> {
  const progress: SyncProgress = {};
  setHandler(progressQuery, () => progress);
  let gate: GateAnswer | undefined;
  setHandler(gateUpdate, async () => {
    await condition(() => gate !== undefined);
    return gate!;
  });

  const planned =
    input.kind === 'sync'
      ? await gateAndPlanDrain(input)
      : await planProductSyncRun({
          tenantId: input.tenantId,
          runId: input.runId,
          requestedBy: input.requestedBy,
          product: input.product,
          only: input.only,
        });
  if (!('plan' in planned)) {
    gate = planned;
    // Let an update that is waiting read the refusal before the run closes.
    await condition(allHandlersFinished);
    return planned;
  }
  const { plan } = planned;
  countWork(progress, plan.work);
  gate = { accepted: true };
  const result = await execute(input, plan, progress);
  await condition(allHandlersFinished);
  return result;
}

function countWork(progress: SyncProgress, work: readonly ProviderWork[]): void {
  for (const w of work) {
    const p = (progress[w.target.provider] ??= { done: 0, total: 0 });
    p.total += w.products.length + w.links.length;
  }
}

async function execute(
  input: { tenantId: string; runId: string },
  plan: RunPlan,
  progress: SyncProgress,
): Promise<SyncRunResult> {
  const failed: SyncOutcome[] = [];
  const verdicts: ProviderVerdict[] = [];
  let synced = 0;
  let pricedLocales = 0;
  const byProvider = new Map<ProviderId, ProviderWork[]>();
  for (const w of plan.work) byProvider.set(w.target.provider, [...(byProvider.get(w.target.provider) ?? []), w]);
  const worked = new Map<ProviderId, SyncEvent>();

  await Promise.all(
    [...byProvider.entries()].map(async ([provider, works]) => {
      const providerFailures: SyncOutcome[] = [];
      let providerSynced = 0;
      // Each mode has its own allowance at the provider: the modes run side by side.
      await Promise.all(
        works.map(async (w) => {
          const { target } = w;
          const { mode } = target;
          const lanes = syncConcurrency(target.provider, mode);
          const tag = `${provider} (${mode})`;
          const modeFailures: SyncOutcome[] = [];
          const step = () => {
            progress[provider].done++;
            log.info('sync progress', { run_id: input.runId, provider, mode, ...progress[provider] });
          };
          let down: string | null = null;
          let modeSynced = 0;
          const refused = new Set<string>();
          await inLanes(
            w.products,
            lanes,
            () => down === null,
            async (item) => {
              try {
                const r = await syncProductAt({ tenantId: input.tenantId, target, productId: item.productId });
                synced++;
                providerSynced++;
                modeSynced++;
                pricedLocales += r.priced_locales;
              } catch (err) {
                const f = failureOf(err);
                modeFailures.push({
                  provider,
                  mode,
                  product: { id: item.productId, sku: item.sku },
                  ok: false,
                  skipped: false,
                  detail: `${tag}: ${f.reason}`,
                });
                if (f.error_class === 'rejected') refused.add(item.productId);
                else down ??= f.reason;
              }
              step();
            },
          );
          await inLanes(
            w.links,
            lanes,
            () => down === null,
            async (link) => {
              if (!refused.has(link.productId)) {
                try {
                  await ensureLinkAt({
                    tenantId: input.tenantId,
                    target,
                    productId: link.productId,
                    appId: link.appId,
                  });
                } catch (err) {
                  const f = failureOf(err);
                  modeFailures.push({
                    provider,
                    mode,
                    product: { id: link.productId, sku: link.sku },
                    ok: false,
                    skipped: false,
                    detail: `${tag} link: ${f.reason}`,
                  });
                  if (f.error_class !== 'rejected') down ??= f.reason;
                }
              }
              step();
            },
          );
          if (down)
            modeFailures.push({
              provider,
              mode,
              product: null,
              ok: false,
              skipped: false,
              detail: `${tag} unreachable: ${down}; the remaining work was not done`,
            });
          providerFailures.push(...modeFailures);
          verdicts.push({
            provider,
            mode,
            ok: modeFailures.length === 0,
            synced: modeSynced,
            detail: modeFailures.length
              ? modeFailures.map((x) => x.detail).join('; ')
              : `${modeSynced} product(s) written, ${w.links.length} link(s) ensured`,
          });
        }),
      );
      failed.push(...providerFailures);
      const event = workedEvent(
        provider,
        works.map((w) => w.target.mode),
        providerSynced,
        providerFailures,
      );
      worked.set(provider, event);
      await recordSyncEvent({ tenantId: input.tenantId, runId: input.runId, event });
    }),
  );
  // Every other provider the run checked: skipped (why) or nothing to do.
  for (const event of runEvents(plan, worked)) {
    if (worked.has(event.provider)) continue;
    await recordSyncEvent({ tenantId: input.tenantId, runId: input.runId, event });
    if (event.status === 'skipped')
      verdicts.push({ provider: event.provider, mode: '-', ok: false, synced: 0, detail: event.reason ?? '' });
  }
  const result: SyncRunResult = {
    ok: failed.length === 0,
    synced,
    priced_locales: pricedLocales,
    skipped: plan.skipped,
    failed,
    needs_human: plan.needsHuman,
    run_id: input.runId,
    verdicts,
  };
  await finishSyncRun({ tenantId: input.tenantId, runId: input.runId, ok: result.ok, result: { ...result } });
  return result;
}
