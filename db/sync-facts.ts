import type { Knex } from 'knex';
import { PROVIDERS, type Mode, type ProviderId, type SyncTarget } from '../domain/providers';
import { speakingConnection } from '../domain/connection-choice';
import type { DriftFacts, DriftProduct, ProviderDriftFacts, RemoteObject } from '../domain/drift';
import { syncModes } from '../domain/drift';
import type { PlannedProduct, ProviderSetupFacts, TargetLinkFacts } from '../domain/sync-plan';
import { isPaywallPublished } from '../domain/paywall';
import type { ProductSpec, Tier } from '../providers/types';
import type { Row } from './row';
import { listConnectionsSafe, type SafeConnection } from './connections';

/**
 * What the sync reads from our side, in the caller's tenant transaction (RLS scopes every
 * query): where to sync (one speaking connection per provider, in the modes it syncs), the
 * catalogue, and what each provider already holds according to our records.
 */

export type { SyncTarget } from '../domain/providers';

export interface ProviderSetup {
  connection: SafeConnection;
  modes: Mode[];
}

export async function providerSetups(trx: Knex.Transaction): Promise<Map<ProviderId, ProviderSetup>> {
  const byProvider = new Map<ProviderId, SafeConnection[]>();
  for (const c of await listConnectionsSafe(trx))
    byProvider.set(c.provider, [...(byProvider.get(c.provider) ?? []), c]);
  const out = new Map<ProviderId, ProviderSetup>();
  for (const p of PROVIDERS) {
    const connection = byProvider.has(p) ? speakingConnection(byProvider.get(p)!) : undefined;
    if (!connection) continue;
    out.set(p, {
      connection,
      modes: syncModes({
        provider: p,
        is_active: connection.is_active,
        has_test_credential: connection.has_test_credential,
        has_live_credential: connection.has_live_credential,
      }),
    });
  }
  return out;
}

export const targetsOf = (setups: Map<ProviderId, ProviderSetup>): SyncTarget[] =>
  [...setups.values()].flatMap(({ connection: c, modes }) =>
    modes.map((mode) => ({ provider: c.provider, connectionId: c.id, accountRef: c.account_ref, mode })),
  );

/** The configured providers as the sync rules see them (plain data: it travels through workflow history). */
export async function providerSetupFacts(trx: Knex.Transaction): Promise<ProviderSetupFacts[]> {
  return [...(await providerSetups(trx)).values()].map(({ connection: c, modes }) => ({
    provider: c.provider,
    connectionId: c.id,
    accountRef: c.account_ref,
    is_active: c.is_active,
    has_test_credential: c.has_test_credential,
    has_live_credential: c.has_live_credential,
    modes,
  }));
}

/** What one target's drift read returned. Keyed `<provider>:<mode>`. */
export type TargetSnapshots = Map<string, { remote: RemoteObject[]; credential_mode: Mode | null }>;

/** Everything drift needs from our side; `remote` and `credential_modes` come from the providers. */
export async function driftDbFacts(
  trx: Knex.Transaction,
  setups: readonly ProviderSetupFacts[],
  snapshots: TargetSnapshots,
): Promise<DriftFacts> {
  // Sequential on purpose: the transaction is one connection (overlapping queries on it are queued, and refused by pg
  // 9).
  const products = await trx('products')
    .where({ active: true })
    .select('id', 'sku', 'version', 'android_store_product_id');
  const prices = await trx('prices as pr')
    .join('products as p', 'p.id', 'pr.product_id')
    .where('p.active', true)
    .select('pr.product_id', 'pr.country');
  const paywall = await trx('paywalls').first('config', 'published_at', 'updated_at');
  const refs = await trx('product_provider_refs').select('product_id', 'provider', 'mode', 'synced_version');
  const links = await trx('payment_links')
    .select('product_id', 'provider', 'mode')
    .unionAll((q) => q.from('provider_plans').select('product_id', 'provider', 'mode'));
  const countries = new Map<string, string[]>();
  for (const r of prices) countries.set(r.product_id, [...(countries.get(r.product_id) ?? []), r.country]);
  const driftProducts: DriftProduct[] = products.map((p: Row) => ({
    id: p.id,
    sku: p.sku,
    version: p.version,
    android_store_product_id: p.android_store_product_id ?? null,
    countries: countries.get(p.id) ?? [],
  }));
  const providers: ProviderDriftFacts[] = setups.map(({ provider, modes, ...c }) => {
    const synced_versions: ProviderDriftFacts['synced_versions'] = {};
    for (const r of refs.filter((x: Row) => x.provider === provider))
      (synced_versions[r.product_id] ??= {})[r.mode as Mode] = r.synced_version;
    const link_modes: ProviderDriftFacts['link_modes'] = {};
    for (const l of links.filter((x: Row) => x.provider === provider)) (link_modes[l.product_id] ??= []).push(l.mode);
    const remote: ProviderDriftFacts['remote'] = {};
    const credential_modes: ProviderDriftFacts['credential_modes'] = {};
    for (const m of modes) {
      const snap = snapshots.get(`${provider}:${m}`);
      remote[m] = snap?.remote ?? [];
      credential_modes[m] = snap?.credential_mode ?? null;
    }
    return {
      provider,
      is_active: c.is_active,
      has_test_credential: c.has_test_credential,
      has_live_credential: c.has_live_credential,
      credential_modes,
      remote,
      synced_versions,
      link_modes,
    };
  });
  const published = paywall ? isPaywallPublished(paywall) : true;
  const skus = Array.isArray(paywall?.config?.skus)
    ? (paywall.config.skus as unknown[]).filter((s): s is string => typeof s === 'string')
    : [];
  return { products: driftProducts, paywall: paywall ? { published, skus } : null, providers };
}

/** The product as an adapter is asked to make it, with its prices. */
export async function loadProductSpec(
  trx: Knex.Transaction,
  tenantId: string,
  productId: string,
): Promise<ProductSpec | null> {
  const p = await trx('products').where({ id: productId }).first();
  if (!p) return null;
  const prices = await trx('prices')
    .where({ product_id: productId })
    .orderBy(['country', 'currency'])
    .select('country', 'currency', 'amount_minor');
  return {
    product_id: p.id,
    tenant_id: tenantId,
    sku: p.sku,
    name: p.name || p.sku,
    type: p.type,
    tier: (p.tier ?? null) as Tier | null,
    version: p.version,
    android_store_product_id: p.android_store_product_id,
    ios_store_product_id: p.ios_store_product_id,
    trial_days: null,
    prices: prices.map((r: Row) => ({
      country: r.country,
      currency: r.currency,
      amount_minor: Number(r.amount_minor),
    })),
  };
}

/** Apps whose purchases go through this connection: those attached to it, else every app of the tenant. */
export async function appsFor(trx: Knex.Transaction, connectionId: string): Promise<string[]> {
  const attached = await trx('app_providers').where({ connection_id: connectionId }).pluck('app_id');
  return attached.length ? attached : trx('apps').orderBy('created_at').pluck('id');
}

/** The product a per-product sync is about, or undefined when the tenant has none with that id. */
export async function productToSync(trx: Knex.Transaction, productId: string): Promise<PlannedProduct | undefined> {
  const p = await trx('products').where({ id: productId }).first('id', 'sku');
  return p ? { productId: p.id, sku: p.sku } : undefined;
}

/** Active products, by SKU: what a drain may write links for. */
export async function activeProducts(trx: Knex.Transaction): Promise<PlannedProduct[]> {
  const rows = await trx('products').where({ active: true }).orderBy('sku').select('id', 'sku');
  return rows.map((p: { id: string; sku: string }) => ({ productId: p.id, sku: p.sku }));
}

/**
 * The apps that sell through the target and the (app, product) pairs that already have a purchase entry point there.
 */
export async function targetLinkFacts(
  trx: Knex.Transaction,
  target: SyncTarget,
  productIds: string[],
): Promise<TargetLinkFacts> {
  if (productIds.length === 0) return { target, apps: [], have: [] };
  const apps = await appsFor(trx, target.connectionId);
  const have = await trx('payment_links')
    .where({ provider: target.provider, mode: target.mode })
    .whereIn('product_id', productIds)
    .select('app_id', 'product_id')
    .unionAll((q) =>
      q
        .from('provider_plans')
        .where({ provider: target.provider, mode: target.mode })
        .whereIn('product_id', productIds)
        .select('app_id', 'product_id'),
    );
  return {
    target,
    apps,
    have: have.map((h: { app_id: string; product_id: string }) => ({ appId: h.app_id, productId: h.product_id })),
  };
}
