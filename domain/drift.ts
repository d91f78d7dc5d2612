import { providerKeyMode } from './keys';
import { isStoreProvider, type Mode, type ProviderId } from './providers';
import { isSyncedAt } from './product-sync';

/**
 * Drift: every divergence between the service and its providers, as findings of the spec's
 * eight kinds. Pure: the facts (catalogue, paywall, connections, provider snapshots) are read
 * elsewhere; the API's report, the sync gate and the drain all call this one function, so the
 * count a caller confirms is the count the drain acts on. Rules: docs/readiness-and-drift.md.
 */

export const DRIFT_KINDS = [
  'product-missing-at-provider',
  'paywall-not-published',
  'credential-mode-mismatch',
  'active-provider-no-credential',
  'no-test-credential',
  'test-links-missing',
  'active-provider-zero-links',
  'missing-currency-for-country',
] as const;
export type DriftKind = (typeof DRIFT_KINDS)[number];

/** The product a finding is about; `id` is null for a SKU the paywall shows that is no active product (or `*`). */
export interface FindingProduct {
  id: string | null;
  sku: string;
}

export interface DriftFinding {
  kind: DriftKind;
  /** The product it is about; null for a finding about the provider as a whole. */
  product: FindingProduct | null;
  provider: ProviderId | null;
  mode: Mode | null;
  /** True when a sync can close it; false goes to `needs_human`. */
  automatable: boolean;
  detail: string;
}

export interface DriftProduct {
  id: string;
  sku: string;
  version: number;
  android_store_product_id: string | null;
  /** Countries priced for this product (ISO 3166-1 alpha-2). */
  countries: string[];
}

/** One provider object as the provider lists it (our product id is in its metadata when it kept it). */
export interface RemoteObject {
  product_id: string | null;
  sku: string | null;
  active: boolean;
}

export interface ProviderDriftFacts {
  provider: ProviderId;
  is_active: boolean;
  has_test_credential: boolean;
  has_live_credential: boolean;
  /** The mode each stored credential actually belongs to, where the provider's key format says (null: cannot tell). */
  credential_modes: Partial<Record<Mode, Mode | null>>;
  /** What the provider holds, per mode read (only modes the service syncs there). */
  remote: Partial<Record<Mode, RemoteObject[]>>;
  /** Our record of what each product synced to here: product id → mode → version. */
  synced_versions: Record<string, Partial<Record<Mode, number>>>;
  /** Purchase entry points (payment links, plans) the service holds for this provider: product id → modes. */
  link_modes: Record<string, Mode[]>;
}

export interface DriftFacts {
  products: DriftProduct[];
  /** Null when the tenant has no paywall. */
  paywall: { published: boolean; skus: string[] } | null;
  providers: ProviderDriftFacts[];
}

/**
 * The modes the service keeps a provider's catalogue in. Web providers: every mode with a
 * credential. Stores have one catalogue for sandbox and production, kept through the live
 * credential (or the test one when that is all there is).
 */
export function syncModes(
  p: Pick<ProviderDriftFacts, 'provider' | 'is_active' | 'has_test_credential' | 'has_live_credential'>,
): Mode[] {
  if (!p.is_active) return [];
  if (isStoreProvider(p.provider)) return p.has_live_credential ? ['live'] : p.has_test_credential ? ['test'] : [];
  return (['test', 'live'] as const).filter((m) => (m === 'test' ? p.has_test_credential : p.has_live_credential));
}

const webOnly = (p: ProviderId) => !isStoreProvider(p);

function providerFindings(p: ProviderDriftFacts, products: DriftProduct[]): DriftFinding[] {
  const out: DriftFinding[] = [];
  const f = (kind: DriftKind, automatable: boolean, detail: string, mode: Mode | null = null): DriftFinding => ({
    kind,
    product: null,
    provider: p.provider,
    mode,
    automatable,
    detail,
  });
  if (!p.is_active) return out;
  if (!p.has_test_credential && !p.has_live_credential) {
    out.push(
      f(
        'active-provider-no-credential',
        false,
        `${p.provider} is active but holds no credential in either mode; enter one in the dashboard (Providers).`,
      ),
    );
    return out;
  }
  if (webOnly(p.provider) && !p.has_test_credential) {
    out.push(
      f(
        'no-test-credential',
        false,
        `${p.provider} has a live credential but no test credential, so nothing can be tried in test mode; enter one in the dashboard.`,
        'test',
      ),
    );
  }
  for (const m of ['test', 'live'] as const) {
    const actual = p.credential_modes[m];
    if (actual && actual !== m) {
      out.push(
        f(
          'credential-mode-mismatch',
          false,
          `the ${m} credential of ${p.provider} is a ${actual} key; replace it in the dashboard.`,
          m,
        ),
      );
    }
  }
  if (webOnly(p.provider) && products.length > 0) {
    const anyLink = Object.values(p.link_modes).some((modes) => modes.length > 0);
    if (!anyLink) {
      out.push(
        f(
          'active-provider-zero-links',
          true,
          `${p.provider} is active but has no payment link or plan for any product; a sync creates them.`,
        ),
      );
    } else if (p.has_test_credential) {
      const missing = products.filter((x) => !(p.link_modes[x.id] ?? []).includes('test')).map((x) => x.sku);
      if (missing.length)
        out.push(
          f(
            'test-links-missing',
            true,
            `no test-mode payment link at ${p.provider} for ${missing.join(', ')}; a sync creates them.`,
            'test',
          ),
        );
    }
  }
  return out;
}

function productFindings(p: ProviderDriftFacts, products: DriftProduct[]): DriftFinding[] {
  const out: DriftFinding[] = [];
  for (const mode of syncModes(p)) {
    // Indexed once per mode: a catalogue of N products against N remote objects stays linear.
    const active = (p.remote[mode] ?? []).filter((r) => r.active);
    const byId = new Set(active.map((r) => r.product_id).filter((id) => id !== null));
    const bySku = new Set(active.filter((r) => r.product_id === null).map((r) => r.sku));
    for (const prod of products) {
      const there = byId.has(prod.id) || bySku.has(prod.sku);
      const version = p.synced_versions[prod.id]?.[mode];
      if (there && isSyncedAt(prod, version === undefined ? undefined : { synced_version: version })) continue;
      const needsStoreId = p.provider === 'store_android' && !prod.android_store_product_id?.trim();
      out.push({
        kind: 'product-missing-at-provider',
        product: { id: prod.id, sku: prod.sku },
        provider: p.provider,
        mode,
        automatable: !needsStoreId,
        detail: needsStoreId
          ? `${prod.sku} has no android_store_product_id, so it cannot be created at store_android; set it first.`
          : there
            ? `${prod.sku} at ${p.provider} (${mode}) is behind: version ${version ?? 'unknown'}, catalogue version ${prod.version}.`
            : `${prod.sku} does not exist at ${p.provider} (${mode}).`,
      });
    }
  }
  return out;
}

function catalogueFindings(facts: DriftFacts): DriftFinding[] {
  const out: DriftFinding[] = [];
  const countries = [...new Set(facts.products.flatMap((p) => p.countries))].sort();
  for (const prod of facts.products) {
    for (const c of countries) {
      if (!prod.countries.includes(c)) {
        out.push({
          kind: 'missing-currency-for-country',
          product: { id: prod.id, sku: prod.sku },
          provider: null,
          mode: null,
          automatable: false,
          detail: `${prod.sku} has no price for ${c}, where other products sell; set one (billing_set_product_pricing).`,
        });
      }
    }
  }
  if (facts.paywall && !facts.paywall.published) {
    const skus = facts.paywall.skus.length ? facts.paywall.skus : ['*'];
    const idOf = new Map(facts.products.map((p) => [p.sku, p.id]));
    for (const sku of skus) {
      out.push({
        kind: 'paywall-not-published',
        product: { id: idOf.get(sku) ?? null, sku },
        provider: null,
        mode: null,
        automatable: false,
        detail: `the paywall showing ${sku} has unpublished changes; publish it in the dashboard (Paywall).`,
      });
    }
  }
  return out;
}

/** Every finding, in a stable order: catalogue first, then per provider in the spec's order. */
export function driftFindings(facts: DriftFacts): DriftFinding[] {
  const products = [...facts.products].sort((a, b) => a.sku.localeCompare(b.sku));
  return [
    ...catalogueFindings({ ...facts, products }),
    ...facts.providers.flatMap((p) => [...providerFindings(p, products), ...productFindings(p, products)]),
  ];
}

/**
 * The API's label for a finding or a sync outcome: `product:<sku>` when it is about a product,
 * else `provider:<p>`. Rendered for answers only; nothing parses it back.
 */
export const subjectOf = (x: { product: { sku: string } | null; provider: ProviderId | null }): string =>
  x.product ? `product:${x.product.sku}` : `provider:${x.provider}`;

/** Which mode a stored credential belongs to, from the provider's own key format; null when it cannot tell. */
export function credentialModeOf(provider: ProviderId, credential: Record<string, string>): Mode | null {
  const probe =
    provider === 'psp_a'
      ? credential.secret_key
      : provider === 'psp_b'
        ? credential.api_key
        : provider === 'psp_c'
          ? credential.key_id
          : undefined;
  return probe ? providerKeyMode(provider, probe) : null;
}
