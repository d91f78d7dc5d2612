import { describe, expect, it } from 'vitest';
import {
  credentialModeOf,
  driftFindings,
  DRIFT_KINDS,
  subjectOf,
  syncModes,
  type DriftFacts,
  type DriftKind,
  type ProviderDriftFacts,
} from '../../domain/drift';
import type { ProviderId } from '../../domain/providers';

const P1 = {
  id: 'p1',
  sku: 'pro_monthly',
  version: 2,
  android_store_product_id: 'pro-monthly',
  countries: ['US', 'DE'],
};
const P2 = { id: 'p2', sku: 'pro_annual', version: 1, android_store_product_id: 'pro-annual', countries: ['US', 'DE'] };

/** A provider in step with the catalogue: both products there at their version, links in every mode. */
function inStep(provider: ProviderId, over: Partial<ProviderDriftFacts> = {}): ProviderDriftFacts {
  const modes = provider.startsWith('store') ? (['live'] as const) : (['test', 'live'] as const);
  const remote = Object.fromEntries(
    modes.map((m) => [m, [P1, P2].map((p) => ({ product_id: p.id, sku: p.sku, active: true }))]),
  );
  return {
    provider,
    is_active: true,
    has_test_credential: true,
    has_live_credential: true,
    credential_modes: provider.startsWith('store') ? { live: null } : { test: 'test', live: 'live' },
    remote,
    synced_versions: {
      p1: Object.fromEntries(modes.map((m) => [m, 2])),
      p2: Object.fromEntries(modes.map((m) => [m, 1])),
    },
    link_modes: { p1: [...modes], p2: [...modes] },
    ...over,
  };
}
const clean = (): DriftFacts => ({
  products: [P1, P2],
  paywall: { published: true, skus: ['pro_monthly'] },
  providers: (['psp_a', 'psp_b', 'psp_c', 'store_android', 'store_ios'] as const).map((p) => inStep(p)),
});
const kinds = (f: DriftFacts) => driftFindings(f).map((x) => x.kind);
const withProvider = (p: ProviderDriftFacts): DriftFacts => ({ ...clean(), providers: [p] });

describe('drift findings', () => {
  it('a tenant in step with every provider has no findings', () => {
    expect(driftFindings(clean())).toEqual([]);
  });

  // kind → facts that produce it, and facts close to them that must not.
  const cases: Record<DriftKind, { produces: DriftFacts; not: DriftFacts; subject: string; automatable: boolean }> = {
    'product-missing-at-provider': {
      produces: withProvider(
        inStep('psp_a', {
          remote: {
            test: [],
            live: [
              { product_id: 'p1', sku: 'pro_monthly', active: true },
              { product_id: 'p2', sku: 'pro_annual', active: true },
            ],
          },
        }),
      ),
      not: withProvider(
        inStep('psp_a', {
          remote: {
            test: [
              { product_id: null, sku: 'pro_monthly', active: true },
              { product_id: null, sku: 'pro_annual', active: true },
            ],
            live: [
              { product_id: 'p1', sku: 'x', active: true },
              { product_id: 'p2', sku: 'y', active: true },
            ],
          },
        }),
      ),
      subject: 'product:pro_annual',
      automatable: true,
    },
    'paywall-not-published': {
      produces: { ...clean(), paywall: { published: false, skus: ['pro_monthly'] } },
      not: { ...clean(), paywall: null },
      subject: 'product:pro_monthly',
      automatable: false,
    },
    'credential-mode-mismatch': {
      produces: withProvider(inStep('psp_b', { credential_modes: { test: 'test', live: 'test' } })),
      not: withProvider(inStep('psp_b', { credential_modes: { test: 'test', live: null } })),
      subject: 'provider:psp_b',
      automatable: false,
    },
    'active-provider-no-credential': {
      produces: withProvider(inStep('psp_c', { has_test_credential: false, has_live_credential: false })),
      not: withProvider(inStep('psp_c', { is_active: false, has_test_credential: false, has_live_credential: false })),
      subject: 'provider:psp_c',
      automatable: false,
    },
    'no-test-credential': {
      produces: withProvider(
        inStep('psp_a', { has_test_credential: false, remote: { live: inStep('psp_a').remote.live } }),
      ),
      not: withProvider(inStep('store_ios', { has_test_credential: false })),
      subject: 'provider:psp_a',
      automatable: false,
    },
    'test-links-missing': {
      produces: withProvider(inStep('psp_c', { link_modes: { p1: ['test', 'live'], p2: ['live'] } })),
      not: withProvider(inStep('store_android', { link_modes: { p1: ['live'], p2: [] } })),
      subject: 'provider:psp_c',
      automatable: true,
    },
    'active-provider-zero-links': {
      produces: withProvider(inStep('psp_a', { link_modes: {} })),
      not: {
        ...withProvider(inStep('psp_a', { link_modes: {}, remote: { test: [], live: [] }, synced_versions: {} })),
        products: [],
      },
      subject: 'provider:psp_a',
      automatable: true,
    },
    'missing-currency-for-country': {
      produces: { ...clean(), products: [P1, { ...P2, countries: ['US'] }] },
      not: {
        ...clean(),
        products: [
          { ...P1, countries: ['US'] },
          { ...P2, countries: ['US'] },
        ],
      },
      subject: 'product:pro_annual',
      automatable: false,
    },
  };

  it('covers every kind of the spec', () => {
    expect(Object.keys(cases).sort()).toEqual([...DRIFT_KINDS].sort());
  });

  for (const [kind, c] of Object.entries(cases)) {
    it(`${kind}: produced, with its subject and automatability`, () => {
      const found = driftFindings(c.produces).filter((f) => f.kind === kind);
      expect(found.length).toBeGreaterThan(0);
      expect(found.map(subjectOf)).toContain(c.subject);
      expect(found.every((f) => f.automatable === c.automatable)).toBe(true);
      expect(found.every((f) => /^(provider|product):/.test(subjectOf(f)))).toBe(true);
    });
    it(`${kind}: absent where it must not appear`, () => {
      expect(kinds(c.not)).not.toContain(kind);
    });
  }

  it('a product behind its catalogue version at a provider is missing there (stale), even if the object exists', () => {
    const f = driftFindings(
      withProvider(inStep('psp_a', { synced_versions: { p1: { test: 1, live: 2 }, p2: { test: 1, live: 1 } } })),
    ).map((x) => ({ ...x, subject: subjectOf(x) }));
    expect(f).toEqual([
      expect.objectContaining({
        kind: 'product-missing-at-provider',
        subject: 'product:pro_monthly',
        provider: 'psp_a',
        mode: 'test',
        automatable: true,
      }),
    ]);
  });

  it('an Android product without a store id cannot be created by a sync: it needs a person', () => {
    const facts = {
      ...withProvider(inStep('store_android', { remote: { live: [] } })),
      products: [{ ...P1, android_store_product_id: '  ' }],
    };
    const f = driftFindings(facts).find((x) => x.kind === 'product-missing-at-provider')!;
    expect(f.automatable).toBe(false);
    expect(f.detail).toContain('android_store_product_id');
  });

  it('zero links is reported once, not also as test links missing', () => {
    expect(kinds(withProvider(inStep('psp_a', { link_modes: {} })))).toEqual(['active-provider-zero-links']);
  });

  it('an inactive provider yields nothing', () => {
    expect(driftFindings(withProvider(inStep('psp_a', { is_active: false, link_modes: {}, remote: {} })))).toEqual([]);
  });
});

describe('sync modes and credential modes', () => {
  it('web providers sync in every mode with a credential; stores keep one catalogue through the live credential', () => {
    expect(
      syncModes({ provider: 'psp_a', is_active: true, has_test_credential: true, has_live_credential: true }),
    ).toEqual(['test', 'live']);
    expect(
      syncModes({ provider: 'psp_a', is_active: true, has_test_credential: false, has_live_credential: true }),
    ).toEqual(['live']);
    expect(
      syncModes({ provider: 'store_ios', is_active: true, has_test_credential: true, has_live_credential: true }),
    ).toEqual(['live']);
    expect(
      syncModes({ provider: 'store_ios', is_active: true, has_test_credential: true, has_live_credential: false }),
    ).toEqual(['test']);
    expect(
      syncModes({ provider: 'psp_b', is_active: false, has_test_credential: true, has_live_credential: true }),
    ).toEqual([]);
  });

  it.each<[ProviderId, Record<string, string>, string | null]>([
    ['psp_a', { secret_key: 'sk_test_abc' }, 'test'],
    ['psp_a', { secret_key: 'sk_live_abc' }, 'live'],
    ['psp_a', { secret_key: 'rk_live_abc' }, 'live'],
    ['psp_b', { api_key: 'pdl_sdbx_apikey_x' }, 'test'],
    ['psp_b', { api_key: 'pdl_live_apikey_x' }, 'live'],
    ['psp_c', { key_id: 'rzp_test_x', key_secret: 's' }, 'test'],
    ['psp_c', { key_id: 'rzp_live_x', key_secret: 's' }, 'live'],
    ['psp_a', { secret_key: 'opaque' }, null],
    ['store_ios', { key_id: 'rzp_live_x' }, null],
  ])('%s %j → %s', (p, cred, mode) => {
    expect(credentialModeOf(p, cred)).toBe(mode);
  });
});
