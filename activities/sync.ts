import { ApplicationFailure } from '@temporalio/activity';
import { withTenant } from '../db/tenant-tx';
import { loadCredential } from '../db/connections';
import { loadProductSpec, type SyncTarget } from '../db/sync-facts';
import { credentialModeOf, type RemoteObject } from '../domain/drift';
import type { Mode } from '../domain/providers';
import { idempotencyKey } from '../providers/idempotency';
import { ProviderError } from '../providers/errors';
import { createPacer, type Pacer } from '../providers/pacing';
import type { ProviderContext } from '../providers/types';
import type { ActivityDeps } from './index';
import { toActivityFailure } from './provider-failures';

export interface ProviderSnapshot {
  remote: RemoteObject[];
  credential_mode: Mode | null;
}

export interface ProductWriteResult {
  external_id: string;
  priced_locales: number;
}

/**
 * The sync's side effects. Credentials are decrypted here, used and dropped: never an activity
 * input or result, so never in Temporal's history. Provider errors become the failures that
 * make the workflow retry (unreachable, rate limited) or record a refusal (rejected).
 */
/** A catalogue context for one target: every call through it waits its turn under the provider's documented rate limit. */
async function pacedContext({ db, config, vault }: ActivityDeps, pacer: Pacer, tenantId: string, target: SyncTarget): Promise<ProviderContext> {
  const credential = await withTenant(db, tenantId, (trx) => loadCredential(trx, vault, target.connectionId, target.mode));
  return { baseUrl: config.providerBaseUrls[target.provider], mode: target.mode, credential, accountRef: target.accountRef, pace: pacer.pace(target.provider, target.mode, target.accountRef) };
}

export function createSyncActivities(deps: ActivityDeps) {
  const { db, adapters, pacer = createPacer() } = deps;
  const providerContext = (tenantId: string, target: SyncTarget) => pacedContext(deps, pacer, tenantId, target);

  /** A 429 holds the whole allowance for the provider's delay (1 s when it names none), then the workflow retries. */
  function failure(target: SyncTarget, err: unknown): unknown {
    if (err instanceof ProviderError && err.errorClass === 'rate_limited') pacer.holdOff(target.provider, target.mode, target.accountRef, err.retryAfterMs ?? 1000);
    return toActivityFailure(err);
  }

  return {
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
    async syncProductAt(input: { tenantId: string; target: SyncTarget; productId: string }): Promise<ProductWriteResult> {
      const { tenantId, target } = input;
      const spec = await withTenant(db, tenantId, (trx) => loadProductSpec(trx, tenantId, input.productId));
      if (!spec) throw ApplicationFailure.create({ type: 'ProductGone', message: 'the product no longer exists', nonRetryable: true });
      const ctx = await providerContext(tenantId, target);
      const key = (step: string) => idempotencyKey({ tenantId, provider: `${target.provider}:${target.mode}`, object: 'product', objectId: spec.product_id, version: spec.version, step });
      try {
        const adapter = adapters[target.provider];
        const { external_id } = await adapter.upsertProduct(ctx, spec, key('product'));
        const { priced_locales } = await adapter.upsertPrices(ctx, external_id, spec, key('prices'));
        await withTenant(db, tenantId, (trx) =>
          trx('product_provider_refs')
            .insert({ tenant_id: tenantId, product_id: spec.product_id, provider: target.provider, mode: target.mode, external_id, synced_version: spec.version, synced_at: trx.fn.now() })
            .onConflict(['product_id', 'provider', 'mode'])
            .merge({ external_id, synced_version: spec.version, synced_at: trx.fn.now(), updated_at: trx.fn.now() }),
        );
        return { external_id, priced_locales };
      } catch (err) {
        throw failure(input.target, err);
      }
    },

    /** The app's purchase entry point for the product at the provider: a payment link or a plan. */
    async ensureLinkAt(input: { tenantId: string; target: SyncTarget; productId: string; appId: string }): Promise<{ kind: string; external_id: string }> {
      const { tenantId, target } = input;
      const found = await withTenant(db, tenantId, async (trx) => ({
        spec: await loadProductSpec(trx, tenantId, input.productId),
        ref: await trx('product_provider_refs').where({ product_id: input.productId, provider: target.provider, mode: target.mode }).first('external_id'),
      }));
      if (!found.spec || !found.ref) throw ApplicationFailure.create({ type: 'ProductNotAtProvider', message: 'the product is not at the provider yet', nonRetryable: true });
      const ctx = await providerContext(tenantId, target);
      const key = idempotencyKey({ tenantId, provider: `${target.provider}:${target.mode}`, object: 'link', objectId: `${input.appId}:${input.productId}`, version: found.spec.version, step: 'link' });
      try {
        const link = await adapters[target.provider].ensurePaymentLink(ctx, found.ref.external_id, found.spec, input.appId, key);
        await withTenant(db, tenantId, async (trx) => {
          const row = { tenant_id: tenantId, app_id: input.appId, product_id: input.productId, connection_id: target.connectionId, provider: target.provider, mode: target.mode, external_id: link.external_id };
          if (link.kind === 'payment_link') {
            await trx('payment_links').insert({ ...row, url: link.url ?? '' }).onConflict(['app_id', 'product_id', 'provider', 'mode']).merge({ external_id: link.external_id, url: link.url ?? '', updated_at: trx.fn.now() });
          } else {
            await trx('provider_plans').insert(row).onConflict(['app_id', 'product_id', 'provider', 'mode']).merge({ external_id: link.external_id, updated_at: trx.fn.now() });
          }
        });
        return { kind: link.kind, external_id: link.external_id };
      } catch (err) {
        throw failure(input.target, err);
      }
    },

    /** One event per provider per run: what happened there and, on failure, why. */
    async recordSyncEvent(input: { tenantId: string; runId: string; provider: string; status: 'succeeded' | 'failed' | 'skipped'; reason: string | null; detail: Record<string, unknown> }): Promise<void> {
      await withTenant(db, input.tenantId, (trx) =>
        trx('sync_events').insert({ tenant_id: input.tenantId, run_id: input.runId, provider: input.provider, status: input.status, reason: input.reason, detail: JSON.stringify(input.detail) }),
      );
    },

    /** Close the run: releases the tenant's one-drain-at-a-time lock (the running row). */
    async finishSyncRun(input: { tenantId: string; runId: string; ok: boolean; result: Record<string, unknown> }): Promise<void> {
      await withTenant(db, input.tenantId, (trx) =>
        trx('sync_runs').where({ id: input.runId }).update({ status: input.ok ? 'succeeded' : 'failed', result: JSON.stringify(input.result), finished_at: trx.fn.now(), updated_at: trx.fn.now() }),
      );
    },
  };
}

/** Retirement's side effects: stop sales of a product at one store, and deactivate the row. */
export function createRetireActivities(deps: ActivityDeps) {
  const { db, adapters, pacer = createPacer() } = deps;
  const providerContext = (tenantId: string, target: SyncTarget) => pacedContext(deps, pacer, tenantId, target);
  return {
    async stopSalesAt(input: { tenantId: string; target: SyncTarget; productId: string }): Promise<{ stopped: boolean }> {
      const { tenantId, target } = input;
      const found = await withTenant(db, tenantId, async (trx) => ({
        spec: await loadProductSpec(trx, tenantId, input.productId),
        ref: await trx('product_provider_refs').where({ product_id: input.productId, provider: target.provider, mode: target.mode }).first('external_id'),
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
      await withTenant(db, input.tenantId, (trx) =>
        trx('products').where({ id: input.productId }).update({ active: false, retired_at: trx.fn.now(), updated_at: trx.fn.now() }),
      );
    },
  };
}
