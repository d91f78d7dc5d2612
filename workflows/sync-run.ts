import { ActivityFailure, ApplicationFailure, defineQuery, log, proxyActivities, setHandler } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { ProviderSnapshot } from '../activities/sync';
import type { SyncTarget } from '../domain/providers';
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
 * One sync run (`sync-<run_id>` or `product-sync-<run_id>`): providers in parallel, each
 * provider's units of work in order (product, then its prices, then the apps' links), so a
 * provider's rate limit sees one request at a time from us. A refused write fails that unit
 * and the run goes on; a provider that stays unreachable fails its remaining work. One sync
 * event per provider; the run row is closed last, which releases the tenant's drain lock.
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
      for (const w of works) {
        const { target } = w;
        const step = () => {
          progress[provider].done++;
          log.info('sync progress', { run_id: input.runId, provider, mode: target.mode, ...progress[provider] });
        };
        let down: string | null = null;
        let modeSynced = 0;
        const refused = new Set<string>();
        for (const item of w.products) {
          if (down) break;
          try {
            const r = await syncProductAt({ tenantId: input.tenantId, target, productId: item.productId });
            synced++;
            providerSynced++;
            modeSynced++;
            pricedLocales += r.priced_locales;
          } catch (err) {
            const f = failureOf(err);
            providerFailures.push({ subject: `product:${item.sku}`, ok: false, skipped: false, detail: `${provider} (${target.mode}): ${f.reason}` });
            if (f.error_class === 'rejected') refused.add(item.productId);
            else down = f.reason;
          }
          step();
        }
        for (const link of w.links) {
          if (down) break;
          if (refused.has(link.productId)) {
            step();
            continue;
          }
          try {
            await ensureLinkAt({ tenantId: input.tenantId, target, productId: link.productId, appId: link.appId });
          } catch (err) {
            const f = failureOf(err);
            providerFailures.push({ subject: `product:${link.sku}`, ok: false, skipped: false, detail: `${provider} (${target.mode}) link: ${f.reason}` });
            if (f.error_class !== 'rejected') down = f.reason;
          }
          step();
        }
        if (down) providerFailures.push({ subject: `provider:${provider}`, ok: false, skipped: false, detail: `${provider} (${target.mode}) unreachable: ${down}; the remaining work was not done` });
        const modeFailures = providerFailures.filter((x) => x.detail.startsWith(`${provider} (${target.mode})`));
        verdicts.push({
          provider,
          mode: target.mode,
          ok: modeFailures.length === 0,
          synced: modeSynced,
          detail: modeFailures.length ? modeFailures.map((x) => x.detail).join('; ') : `${modeSynced} product(s) written, ${w.links.length} link(s) ensured`,
        });
      }
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
