import type { Knex } from 'knex';
import { PROVIDERS, type Mode, type ProviderId, type SyncTarget } from '../domain/providers';
import { speakingConnection } from '../domain/connection-choice';
import type { DriftFacts, DriftProduct, ProviderDriftFacts, RemoteObject } from '../domain/drift';
import { syncModes } from '../domain/drift';
import { isPaywallPublished } from '../domain/paywall';
import type { ProductSpec, Tier } from '../providers/types';
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
  for (const c of await listConnectionsSafe(trx)) byProvider.set(c.provider, [...(byProvider.get(c.provider) ?? []), c]);
  const out = new Map<ProviderId, ProviderSetup>();
  for (const p of PROVIDERS) {
    const connection = byProvider.has(p) ? speakingConnection(byProvider.get(p)!) : undefined;
    if (!connection) continue;
    out.set(p, {
      connection,
      modes: syncModes({ provider: p, is_active: connection.is_active, has_test_credential: connection.has_test_credential, has_live_credential: connection.has_live_credential }),
    });
  }
  return out;
}

export const targetsOf = (setups: Map<ProviderId, ProviderSetup>): SyncTarget[] =>
  [...setups.values()].flatMap(({ connection: c, modes }) => modes.map((mode) => ({ provider: c.provider, connectionId: c.id, accountRef: c.account_ref, mode })));

/** Everything drift needs from our side; `remote` and `credential_modes` come from the providers. */
export async function driftDbFacts(
  trx: Knex.Transaction,
  setups: Map<ProviderId, ProviderSetup>,
  snapshots: Map<string, { remote: RemoteObject[]; credential_mode: Mode | null }>,
): Promise<DriftFacts> {
  // Sequential on purpose: the transaction is one connection (overlapping queries on it are queued, and refused by pg 9).
  const products = await trx('products').where({ active: true }).select('id', 'sku', 'version', 'android_store_product_id');
  const prices = await trx('prices as pr').join('products as p', 'p.id', 'pr.product_id').where('p.active', true).select('pr.product_id', 'pr.country');
  const paywall = await trx('paywalls').first('config', 'published_at', 'updated_at');
  const refs = await trx('product_provider_refs').select('product_id', 'provider', 'mode', 'synced_version');
  const links = await trx('payment_links').select('product_id', 'provider', 'mode').unionAll((q) => q.from('provider_plans').select('product_id', 'provider', 'mode'));
  const countries = new Map<string, string[]>();
  for (const r of prices) countries.set(r.product_id, [...(countries.get(r.product_id) ?? []), r.country]);
  const driftProducts: DriftProduct[] = products.map((p: any) => ({
    id: p.id, sku: p.sku, version: p.version, android_store_product_id: p.android_store_product_id ?? null, countries: countries.get(p.id) ?? [],
  }));
  const providers: ProviderDriftFacts[] = [...setups.entries()].map(([provider, { connection: c, modes }]) => {
    const synced_versions: ProviderDriftFacts['synced_versions'] = {};
    for (const r of refs.filter((x: any) => x.provider === provider)) (synced_versions[r.product_id] ??= {})[r.mode as Mode] = r.synced_version;
    const link_modes: ProviderDriftFacts['link_modes'] = {};
    for (const l of links.filter((x: any) => x.provider === provider)) (link_modes[l.product_id] ??= []).push(l.mode);
    const remote: ProviderDriftFacts['remote'] = {};
    const credential_modes: ProviderDriftFacts['credential_modes'] = {};
    for (const m of modes) {
      const snap = snapshots.get(`${provider}:${m}`);
      remote[m] = snap?.remote ?? [];
      credential_modes[m] = snap?.credential_mode ?? null;
    }
    return { provider, is_active: c.is_active, has_test_credential: c.has_test_credential, has_live_credential: c.has_live_credential, credential_modes, remote, synced_versions, link_modes };
  });
  const published = paywall ? isPaywallPublished(paywall) : true;
  const skus = Array.isArray(paywall?.config?.skus) ? (paywall.config.skus as unknown[]).filter((s): s is string => typeof s === 'string') : [];
  return { products: driftProducts, paywall: paywall ? { published, skus } : null, providers };
}

/** The product as an adapter is asked to make it, with its prices. */
export async function loadProductSpec(trx: Knex.Transaction, tenantId: string, productId: string): Promise<ProductSpec | null> {
  const p = await trx('products').where({ id: productId }).first();
  if (!p) return null;
  const prices = await trx('prices').where({ product_id: productId }).orderBy(['country', 'currency']).select('country', 'currency', 'amount_minor');
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
    prices: prices.map((r: any) => ({ country: r.country, currency: r.currency, amount_minor: Number(r.amount_minor) })),
  };
}

/** Apps whose purchases go through this connection: those attached to it, else every app of the tenant. */
export async function appsFor(trx: Knex.Transaction, connectionId: string): Promise<string[]> {
  const attached = await trx('app_providers').where({ connection_id: connectionId }).pluck('app_id');
  return attached.length ? attached : trx('apps').orderBy('created_at').pluck('id');
}

/** (app, product) pairs that have no purchase entry point at this provider in this mode. */
export async function missingLinks(trx: Knex.Transaction, target: SyncTarget, productIds: string[]): Promise<{ appId: string; productId: string }[]> {
  if (productIds.length === 0) return [];
  const apps = await appsFor(trx, target.connectionId);
  const have = await trx('payment_links').where({ provider: target.provider, mode: target.mode }).whereIn('product_id', productIds).select('app_id', 'product_id')
    .unionAll((q) => q.from('provider_plans').where({ provider: target.provider, mode: target.mode }).whereIn('product_id', productIds).select('app_id', 'product_id'));
  const seen = new Set(have.map((h: any) => `${h.app_id}:${h.product_id}`));
  return apps.flatMap((appId: string) => productIds.filter((productId) => !seen.has(`${appId}:${productId}`)).map((productId) => ({ appId, productId })));
}
