import { activityInfo, ApplicationFailure } from '@temporalio/activity';
import { withTenant } from '../db/tenant-tx';
import { loadCredential } from '../db/connection-service';
import {
  activeProducts,
  driftDbFacts,
  loadProductSpec,
  providerSetupFacts,
  targetLinkFacts,
  type SyncTarget,
} from '../db/sync-facts';
import { finishSyncRun, recordSyncEvent, takeDrainLock } from '../db/sync-runs';
import { noteReadinessChange } from '../db/outbound-events';
import { deactivateProduct, providerRefOf, recordLinkAt, recordProductAt } from '../db/sync-writes';
import { credentialModeOf, driftFindings, type RemoteObject } from '../domain/drift';
import type { Mode, ProviderId } from '../domain/providers';
import {
  countGate,
  drainRunPlan,
  productRunPlan,
  syncTargets,
  SYNC_IN_PROGRESS,
  type ProviderSetupFacts,
  type RunPlan,
  type SyncEvent,
  type SyncRefusal,
} from '../domain/sync-plan';
import { idempotencyKey } from '../providers/idempotency';
import { ProviderError } from '../providers/errors';
import { createPacer, type Pacer } from '../providers/pacing';
import type { ProviderContext } from '../providers/types';
import type { ActivityDeps } from './deps';

/** The workflow this activity runs for: its run row records it, for the dashboard. */
function runningWorkflowId(): string {
  const id = activityInfo().workflowExecution?.workflowId;
  // Only the sync workflow schedules the planning activities, so a run always has one.
  if (!id)
    throw ApplicationFailure.create({
      type: 'NoSyncWorkflow',
      message: 'a sync run is planned by its workflow only',
      nonRetryable: true,
    });
  return id;
}
import { syncRuns } from '../runtime/metrics';
import { toActivityFailure } from './provider-failures';

export interface ProviderSnapshot {
  remote: RemoteObject[];
  credential_mode: Mode | null;
}

/** A target's drift read, as the workflow hands it on. */
export interface TargetSnapshot {
  target: SyncTarget;
  snapshot: ProviderSnapshot;
}

/** A run's plan, or why it does not run. */
export type PlanOrRefusal = { plan: RunPlan } | SyncRefusal;

export interface ProductWriteResult {
  external_id: string;
  priced_locales: number;
}

/**
 * The sync's side effects. Credentials are decrypted here, used and dropped: never an activity
 * input or result, so never in Temporal's history. Provider errors become the failures that
 * make the workflow retry (unreachable, rate limited) or record a refusal (rejected).
 */
/**
 * A catalogue context for one target: every call through it waits its turn under the provider's documented rate limit.
 */
async function pacedContext(
  { db, config, vault }: ActivityDeps,
  pacer: Pacer,
  tenantId: string,
  target: SyncTarget,
): Promise<ProviderContext> {
  const credential = await withTenant(db, tenantId, (trx) =>
    loadCredential(trx, vault, target.connectionId, target.mode),
  );
  return {
    baseUrl: config.providerBaseUrls[target.provider],
    mode: target.mode,
    credential,
    accountRef: target.accountRef,
    pace: pacer.pace(target.provider, target.mode, target.accountRef),
  };
}

export function createSyncActivities(deps: ActivityDeps) {
  const { db, adapters, pacer = createPacer() } = deps;
  const providerContext = (tenantId: string, target: SyncTarget) => pacedContext(deps, pacer, tenantId, target);

  /** A 429 holds the whole allowance for the provider's delay (1 s when it names none), then the workflow retries. */
  function failure(target: SyncTarget, err: unknown): unknown {
    if (err instanceof ProviderError && err.errorClass === 'rate_limited')
      pacer.holdOff(target.provider, target.mode, target.accountRef, err.retryAfterMs ?? 1000);
    return toActivityFailure(err);
  }

  return {
    /** The configured providers and the modes each is synced in: what a run reads and writes. */
    async loadSyncSetup(input: { tenantId: string }): Promise<ProviderSetupFacts[]> {
      return withTenant(db, input.tenantId, (trx) => providerSetupFacts(trx));
    },

    /**
     * The gate and plan of a drain, in one tenant transaction: drift from the snapshots and our
     * records, the confirm count checked, the drain lock taken, then what to write. A refusal
     * writes nothing.
     */
    async planDrainRun(input: {
      tenantId: string;
      runId: string;
      requestedBy: string | null;
      confirmCount: number | null;
      setups: ProviderSetupFacts[];
      snapshots: TargetSnapshot[];
    }): Promise<PlanOrRefusal> {
      const { tenantId, setups } = input;
      return withTenant(db, tenantId, async (trx) => {
        const snapshots = new Map(input.snapshots.map((s) => [`${s.target.provider}:${s.target.mode}`, s.snapshot]));
        const findings = driftFindings(await driftDbFacts(trx, setups, snapshots));
        const refused = countGate(findings, input.confirmCount);
        if (refused) return refused;
        if (
          !(await takeDrainLock(trx, {
            runId: input.runId,
            tenantId,
            kind: 'sync',
            confirmCount: input.confirmCount,
            requestedBy: input.requestedBy,
            workflowId: runningWorkflowId(),
          }))
        )
          return SYNC_IN_PROGRESS;
        const products = await activeProducts(trx);
        const links = [];
        for (const target of syncTargets(setups))
          links.push(
            await targetLinkFacts(
              trx,
              target,
              products.map((p) => p.productId),
            ),
          );
        return { plan: drainRunPlan({ setups, findings, products, links }) };
      });
    },

    /** The plan of one product's sync (POST /v1/products/{id}/sync), with the drain lock taken. */
    async planProductSyncRun(input: {
      tenantId: string;
      runId: string;
      requestedBy: string | null;
      product: { productId: string; sku: string };
      only?: ProviderId;
    }): Promise<PlanOrRefusal> {
      const { tenantId, product, only } = input;
      return withTenant(db, tenantId, async (trx) => {
        const setups = await providerSetupFacts(trx);
        if (
          !(await takeDrainLock(trx, {
            runId: input.runId,
            tenantId,
            kind: 'product-sync',
            confirmCount: null,
            requestedBy: input.requestedBy,
            workflowId: runningWorkflowId(),
          }))
        )
          return SYNC_IN_PROGRESS;
        const links = [];
        for (const target of syncTargets(setups).filter((t) => !only || t.provider === only))
          links.push(await targetLinkFacts(trx, target, [product.productId]));
        return { plan: productRunPlan({ setups, product, links, only }) };
      });
    },

    /** What the provider holds, and which mode its stored credential really belongs to. */
    async readProviderSnapshot(input: { tenantId: string; target: SyncTarget }): Promise<ProviderSnapshot> {
      const ctx = await providerContext(input.tenantId, input.target);
      try {
        const remote = await adapters[input.target.provider].listRemoteProducts(ctx);
        return {
          remote: remote.map((r) => ({ product_id: r.product_id ?? null, sku: r.sku, active: r.active })),
          credential_mode: credentialModeOf(input.target.provider, ctx.credential),
        };
      } catch (err) {
        throw failure(input.target, err);
      }
    },

    /** Create or update the product and its prices at the provider, then record the version it now carries. */
    async syncProductAt(input: {
      tenantId: string;
      target: SyncTarget;
      productId: string;
    }): Promise<ProductWriteResult> {
      const { tenantId, target } = input;
      const spec = await withTenant(db, tenantId, (trx) => loadProductSpec(trx, tenantId, input.productId));
      if (!spec)
        throw ApplicationFailure.create({
          type: 'ProductGone',
          message: 'the product no longer exists',
          nonRetryable: true,
        });
      const ctx = await providerContext(tenantId, target);
      const key = (step: string) =>
        idempotencyKey({
          tenantId,
          provider: `${target.provider}:${target.mode}`,
          object: 'product',
          objectId: spec.product_id,
          version: spec.version,
          step,
        });
      try {
        const adapter = adapters[target.provider];
        const { external_id } = await adapter.upsertProduct(ctx, spec, key('product'));
        const { priced_locales } = await adapter.upsertPrices(ctx, external_id, spec, key('prices'));
        await withTenant(db, tenantId, (trx) => recordProductAt(trx, tenantId, target, spec, external_id));
        return { external_id, priced_locales };
      } catch (err) {
        throw failure(input.target, err);
      }
    },

    /** The app's purchase entry point for the product at the provider: a payment link or a plan. */
    async ensureLinkAt(input: {
      tenantId: string;
      target: SyncTarget;
      productId: string;
      appId: string;
    }): Promise<{ kind: string; external_id: string }> {
      const { tenantId, target } = input;
      const found = await withTenant(db, tenantId, async (trx) => ({
        spec: await loadProductSpec(trx, tenantId, input.productId),
        ref: await providerRefOf(trx, input.productId, target),
      }));
      if (!found.spec || !found.ref)
        throw ApplicationFailure.create({
          type: 'ProductNotAtProvider',
          message: 'the product is not at the provider yet',
          nonRetryable: true,
        });
      const ctx = await providerContext(tenantId, target);
      const key = idempotencyKey({
        tenantId,
        provider: `${target.provider}:${target.mode}`,
        object: 'link',
        objectId: `${input.appId}:${input.productId}`,
        version: found.spec.version,
        step: 'link',
      });
      try {
        const link = await adapters[target.provider].ensurePaymentLink(
          ctx,
          found.ref.external_id,
          found.spec,
          input.appId,
          key,
        );
        await withTenant(db, tenantId, (trx) => recordLinkAt(trx, tenantId, target, input, link));
        return { kind: link.kind, external_id: link.external_id };
      } catch (err) {
        throw failure(input.target, err);
      }
    },

    /** One event per provider per run: what happened there and, on failure or skip, why. */
    async recordSyncEvent(input: { tenantId: string; runId: string; event: SyncEvent }): Promise<void> {
      await withTenant(db, input.tenantId, (trx) => recordSyncEvent(trx, input.tenantId, input.runId, input.event));
    },

    /** Close the run: releases the tenant's one-drain-at-a-time lock (the running row). */
    async finishSyncRun(input: {
      tenantId: string;
      runId: string;
      ok: boolean;
      result: Record<string, unknown>;
    }): Promise<void> {
      await withTenant(db, input.tenantId, async (trx) => {
        await finishSyncRun(trx, input.runId, input.ok, input.result);
        // A run changes what is synced, which readiness judges: a change is pushed to the tenant's endpoints.
        await noteReadinessChange(trx, input.tenantId);
      });
      syncRuns.inc({ outcome: input.ok ? 'ok' : 'failed' });
    },
  };
}

/** Retirement's side effects: stop sales of a product at one store, and deactivate the row. */
export function createRetireActivities(deps: ActivityDeps) {
  const { db, adapters, pacer = createPacer() } = deps;
  const providerContext = (tenantId: string, target: SyncTarget) => pacedContext(deps, pacer, tenantId, target);
  return {
    async stopSalesAt(input: {
      tenantId: string;
      target: SyncTarget;
      productId: string;
    }): Promise<{ stopped: boolean }> {
      const { tenantId, target } = input;
      const found = await withTenant(db, tenantId, async (trx) => ({
        spec: await loadProductSpec(trx, tenantId, input.productId),
        ref: await providerRefOf(trx, input.productId, target),
      }));
      // Never created at this store: nothing on sale there to stop.
      if (!found.spec || !found.ref) return { stopped: false };
      // The same paced context as the sync's writes: retiring talks to the same catalogue API, under the same limit.
      const ctx = await providerContext(tenantId, target);
      try {
        await adapters[target.provider].stopSales(ctx, found.ref.external_id, found.spec);
        return { stopped: true };
      } catch (err) {
        throw toActivityFailure(err);
      }
    },

    async deactivateProduct(input: { tenantId: string; productId: string }): Promise<void> {
      await withTenant(db, input.tenantId, (trx) => deactivateProduct(trx, input.productId));
    },
  };
}
