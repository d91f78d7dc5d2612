import { ActivityFailure, ApplicationFailure, defineQuery, log, proxyActivities, setHandler } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { ProviderSnapshot } from '../activities/sync';
import type { SyncTarget } from '../domain/providers';
import { syncConcurrency } from '../domain/rate-limits';
import type { DriftFinding } from '../domain/drift';

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
const { recordSyncEvent, finishSyncRun } = proxyActivities<Activities>({
  startToCloseTimeout: '15 seconds',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '10 seconds' },
});

export type ErrorClass = 'unreachable' | 'rate_limited' | 'rejected';

function failureOf(err: unknown): { error_class: ErrorClass; reason: string } {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  const d = cause instanceof ApplicationFailure ? (cause.details?.[0] as { error_class?: ErrorClass; reason?: string } | undefined) : undefined;
  return { error_class: d?.error_class ?? 'unreachable', reason: d?.reason ?? String((cause as Error)?.message ?? err) };
}

export interface SnapshotOutcome {
  target: SyncTarget;
  snapshot: ProviderSnapshot | null;
  error_class: ErrorClass | null;
  reason: string | null;
}

/** Read every sync target in parallel (one activity each); failures become verdicts, never a partial answer. */
export async function driftSnapshotWorkflow(input: { tenantId: string; targets: SyncTarget[] }): Promise<SnapshotOutcome[]> {
  return Promise.all(
    input.targets.map(async (target): Promise<SnapshotOutcome> => {
      try {
        return { target, snapshot: await readProviderSnapshot({ tenantId: input.tenantId, target }), error_class: null, reason: null };
      } catch (err) {
        return { target, snapshot: null, ...failureOf(err) };
      }
    }),
  );
}

export interface SyncOutcome {
  subject: string;
  ok: boolean;
  skipped: boolean;
  detail: string;
}

export interface ProviderWork {
  target: SyncTarget;
  products: { productId: string; sku: string }[];
  links: { appId: string; productId: string; sku: string }[];
}

export interface SyncRunInput {
  tenantId: string;
  runId: string;
  kind: 'sync' | 'product-sync';
  work: ProviderWork[];
  needsHuman: DriftFinding[];
  skipped: SyncOutcome[];
}

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
 * One sync run (`sync-<run_id>` or `product-sync-<run_id>`): providers and their modes in
 * parallel; within one provider and mode, products (each with its prices) first and then the
 * apps' links, a few at a time (syncConcurrency, from the provider's documented rate limit).
 * The activities pace every provider call to that limit (providers/pacing.ts) and a 429 is
 * retried after the provider's delay, so the lanes only keep the allowance busy. A refused
 * write fails that unit and the run goes on; a provider that stays unreachable fails its
 * remaining work. One sync event per provider; the run row is closed last, which releases the
 * tenant's drain lock.
 */
export async function syncRunWorkflow(input: SyncRunInput): Promise<SyncRunResult> {
  const progress: SyncProgress = {};
  for (const w of input.work) {
    const p = (progress[w.target.provider] ??= { done: 0, total: 0 });
    p.total += w.products.length + w.links.length;
  }
  setHandler(progressQuery, () => progress);

  const failed: SyncOutcome[] = [];
  const verdicts: ProviderVerdict[] = [];
  let synced = 0;
  let pricedLocales = 0;
  const byProvider = new Map<string, ProviderWork[]>();
  for (const w of input.work) byProvider.set(w.target.provider, [...(byProvider.get(w.target.provider) ?? []), w]);

  await Promise.all(
    [...byProvider.entries()].map(async ([provider, works]) => {
      const providerFailures: SyncOutcome[] = [];
      let providerSynced = 0;
      // Each mode has its own allowance at the provider: the modes run side by side.
      await Promise.all(
        works.map(async (w) => {
          const { target } = w;
          const lanes = syncConcurrency(target.provider, target.mode);
          const tag = `${provider} (${target.mode})`;
          const modeFailures: SyncOutcome[] = [];
          const step = () => {
            progress[provider].done++;
            log.info('sync progress', { run_id: input.runId, provider, mode: target.mode, ...progress[provider] });
          };
          let down: string | null = null;
          let modeSynced = 0;
          const refused = new Set<string>();
          await inLanes(w.products, lanes, () => down === null, async (item) => {
            try {
              const r = await syncProductAt({ tenantId: input.tenantId, target, productId: item.productId });
              synced++;
              providerSynced++;
              modeSynced++;
              pricedLocales += r.priced_locales;
            } catch (err) {
              const f = failureOf(err);
              modeFailures.push({ subject: `product:${item.sku}`, ok: false, skipped: false, detail: `${tag}: ${f.reason}` });
              if (f.error_class === 'rejected') refused.add(item.productId);
              else down ??= f.reason;
            }
            step();
          });
          await inLanes(w.links, lanes, () => down === null, async (link) => {
            if (!refused.has(link.productId)) {
              try {
                await ensureLinkAt({ tenantId: input.tenantId, target, productId: link.productId, appId: link.appId });
              } catch (err) {
                const f = failureOf(err);
                modeFailures.push({ subject: `product:${link.sku}`, ok: false, skipped: false, detail: `${tag} link: ${f.reason}` });
                if (f.error_class !== 'rejected') down ??= f.reason;
              }
            }
            step();
          });
          if (down) modeFailures.push({ subject: `provider:${provider}`, ok: false, skipped: false, detail: `${tag} unreachable: ${down}; the remaining work was not done` });
          providerFailures.push(...modeFailures);
          verdicts.push({
            provider,
            mode: target.mode,
            ok: modeFailures.length === 0,
            synced: modeSynced,
            detail: modeFailures.length ? modeFailures.map((x) => x.detail).join('; ') : `${modeSynced} product(s) written, ${w.links.length} link(s) ensured`,
          });
        }),
      );
      failed.push(...providerFailures);
      await recordSyncEvent({
        tenantId: input.tenantId,
        runId: input.runId,
        provider,
        status: providerFailures.length ? 'failed' : 'succeeded',
        reason: providerFailures.length ? providerFailures.map((x) => x.detail).join('; ') : null,
        detail: { synced: providerSynced, failed: providerFailures.length, modes: works.map((w) => w.target.mode) },
      });
    }),
  );
  for (const s of input.skipped) {
    const provider = s.subject.replace(/^provider:/, '');
    await recordSyncEvent({ tenantId: input.tenantId, runId: input.runId, provider, status: 'skipped', reason: s.detail, detail: {} });
    verdicts.push({ provider, mode: '-', ok: false, synced: 0, detail: s.detail });
  }
  const result: SyncRunResult = {
    ok: failed.length === 0,
    synced,
    priced_locales: pricedLocales,
    skipped: input.skipped,
    failed,
    needs_human: input.needsHuman,
    run_id: input.runId,
    verdicts,
  };
  await finishSyncRun({ tenantId: input.tenantId, runId: input.runId, ok: result.ok, result: { ...result } });
  return result;
}
