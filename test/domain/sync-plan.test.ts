import { describe, expect, it } from 'vitest';
import type { DriftFinding } from '../../domain/drift';
import { subjectOf } from '../../domain/drift';
import type { SyncTarget } from '../../domain/providers';
import {
  confirmCountOf,
  countGate,
  drainRunPlan,
  driftIncomplete,
  missingLinks,
  productRunPlan,
  runEvents,
  unreadTargets,
  skippedProviders,
  syncTargets,
  workedEvent,
  type ProviderSetupFacts,
  type TargetLinkFacts,
} from '../../domain/sync-plan';

const setup = (
  provider: ProviderSetupFacts['provider'],
  over: Partial<ProviderSetupFacts> = {},
): ProviderSetupFacts => ({
  provider,
  connectionId: `conn-${provider}`,
  accountRef: `acct-${provider}`,
  is_active: true,
  has_test_credential: true,
  has_live_credential: true,
  modes: provider.startsWith('store') ? ['live'] : ['test', 'live'],
  ...over,
});

const missing = (
  provider: SyncTarget['provider'],
  mode: SyncTarget['mode'],
  id: string,
  sku: string,
  automatable = true,
): DriftFinding => ({
  kind: 'product-missing-at-provider',
  product: { id, sku },
  provider,
  mode,
  automatable,
  detail: `${sku} does not exist at ${provider} (${mode}).`,
});

const unpublished: DriftFinding = {
  kind: 'paywall-not-published',
  product: { id: null, sku: '*' },
  provider: null,
  mode: null,
  automatable: false,
  detail: 'publish it',
};

const linkFacts = (
  target: SyncTarget,
  apps: string[],
  have: { appId: string; productId: string }[] = [],
): TargetLinkFacts => ({ target, apps, have });

describe('the gate', () => {
  it('the confirm count is every finding, automatable or not', () => {
    expect(confirmCountOf([missing('psp_a', 'test', 'p1', 'a'), unpublished])).toBe(2);
    expect(confirmCountOf([])).toBe(0);
  });

  it('passes only the exact count; a missing count is a mismatch with received null', () => {
    const findings = [missing('psp_a', 'test', 'p1', 'a'), unpublished];
    expect(countGate(findings, 2)).toBeNull();
    expect(countGate(findings, 3)).toMatchObject({ refused: 'count_mismatch', expected: 2, received: 3 });
    expect(countGate(findings, null)).toMatchObject({ refused: 'count_mismatch', expected: 2, received: null });
    expect(countGate([], 0)).toBeNull();
    expect(countGate(findings, 1)!.detail).toContain('2 item(s)');
  });

  it('unread targets: those a drift read got no snapshot of, with the reason it gave', () => {
    const target = (provider: SyncTarget['provider'], mode: SyncTarget['mode']): SyncTarget => ({
      provider,
      mode,
      connectionId: 'c',
      accountRef: 'a',
    });
    expect(
      unreadTargets([
        { target: target('psp_a', 'test'), snapshot: { remote: [] }, reason: null },
        { target: target('psp_b', 'live'), snapshot: null, reason: 'down' },
        { target: target('psp_c', 'test'), snapshot: null, reason: null },
      ]),
    ).toEqual([
      { provider: 'psp_b', mode: 'live', reason: 'down' },
      { provider: 'psp_c', mode: 'test', reason: 'unreadable' },
    ]);
  });

  it('an unread target refuses the run, naming every one with its reason', () => {
    expect(driftIncomplete([])).toBeNull();
    const r = driftIncomplete([
      { provider: 'psp_b', mode: 'test', reason: 'down' },
      { provider: 'psp_c', mode: 'live', reason: '503' },
    ]);
    expect(r).toMatchObject({ refused: 'drift_incomplete' });
    expect(r!.detail).toContain('psp_b (test): down');
    expect(r!.detail).toContain('psp_c (live): 503');
  });
});

describe('the plan', () => {
  const setups = [
    setup('psp_a'),
    setup('store_android'),
    setup('psp_b', { is_active: false, modes: [] }),
    setup('psp_c', { has_test_credential: false, has_live_credential: false, modes: [] }),
  ];
  const targets = syncTargets(setups);
  const products = [
    { productId: 'p1', sku: 'a' },
    { productId: 'p2', sku: 'b' },
  ];

  it('targets: one per provider and mode it is synced in', () => {
    expect(targets.map((t) => `${t.provider}:${t.mode}:${t.connectionId}`)).toEqual([
      'psp_a:test:conn-psp_a',
      'psp_a:live:conn-psp_a',
      'store_android:live:conn-store_android',
    ]);
  });

  it('skipped providers say why: inactive, or no credential; narrowed to one provider on request', () => {
    const skipped = skippedProviders(setups);
    expect(skipped.map((s) => [s.provider, s.detail])).toEqual([
      ['psp_b', 'the psp_b connection is inactive'],
      ['psp_c', 'psp_c holds no credential to sync with; enter one in the dashboard'],
    ]);
    expect(
      skipped.every((s) => s.skipped && !s.ok && s.product === null && subjectOf(s) === `provider:${s.provider}`),
    ).toBe(true);
    expect(skippedProviders(setups, 'psp_c').map((s) => s.provider)).toEqual(['psp_c']);
    expect(skippedProviders(setups, 'psp_a')).toEqual([]);
  });

  it('missing links: every app × product pair the target does not have yet', () => {
    const facts = linkFacts(targets[0], ['app1', 'app2'], [{ appId: 'app1', productId: 'p1' }]);
    expect(missingLinks(facts, products)).toEqual([
      { appId: 'app1', productId: 'p2', sku: 'b' },
      { appId: 'app2', productId: 'p1', sku: 'a' },
      { appId: 'app2', productId: 'p2', sku: 'b' },
    ]);
  });

  it('a drain writes the automatable missing products, links what is not blocked, and sends the rest to a person', () => {
    const findings = [
      missing('psp_a', 'test', 'p1', 'a'),
      missing('psp_a', 'live', 'p2', 'b'),
      missing('store_android', 'live', 'p2', 'b', false), // no android_store_product_id: blocked there
      unpublished,
    ];
    const links = [
      linkFacts(
        targets[0],
        ['app1'],
        [
          { appId: 'app1', productId: 'p1' },
          { appId: 'app1', productId: 'p2' },
        ],
      ), // psp_a test: links all there
      linkFacts(targets[1], ['app1']), // psp_a live: no links yet
      linkFacts(targets[2], ['app1']), // store_android: p2 blocked
    ];
    const plan = drainRunPlan({ setups, findings, products, links });
    expect(plan.work).toEqual([
      { target: targets[0], products: [{ productId: 'p1', sku: 'a' }], links: [] },
      {
        target: targets[1],
        products: [{ productId: 'p2', sku: 'b' }],
        links: [
          { appId: 'app1', productId: 'p1', sku: 'a' },
          { appId: 'app1', productId: 'p2', sku: 'b' },
        ],
      },
      { target: targets[2], products: [], links: [{ appId: 'app1', productId: 'p1', sku: 'a' }] },
    ]);
    expect(plan.needsHuman).toEqual([findings[2], unpublished]);
    expect(plan.skipped.map((s) => s.provider)).toEqual(['psp_b', 'psp_c']);
    expect(plan.providers.map((p) => p.provider)).toEqual(['psp_a', 'store_android', 'psp_b', 'psp_c']);
  });

  it('a drain with nothing to do plans no work, and still names every configured provider', () => {
    const links = targets.map((t) =>
      linkFacts(
        t,
        ['app1'],
        products.map((p) => ({ appId: 'app1', productId: p.productId })),
      ),
    );
    const plan = drainRunPlan({ setups, findings: [], products, links });
    expect(plan.work).toEqual([]);
    expect(plan.providers).toEqual([
      { provider: 'psp_a', modes: ['test', 'live'] },
      { provider: 'store_android', modes: ['live'] },
      { provider: 'psp_b', modes: [] },
      { provider: 'psp_c', modes: [] },
    ]);
  });

  it('a product sync writes the product at every target given; a provider asked for and not connected is skipped', () => {
    const product = products[0];
    const all = productRunPlan({ setups, product, links: targets.map((t) => linkFacts(t, ['app1'])) });
    expect(all.work.map((w) => [w.target.provider, w.target.mode, w.products.length, w.links.length])).toEqual([
      ['psp_a', 'test', 1, 1],
      ['psp_a', 'live', 1, 1],
      ['store_android', 'live', 1, 1],
    ]);
    expect(all.providers.map((p) => p.provider)).toEqual(['psp_a', 'store_android', 'psp_b', 'psp_c']);

    const one = productRunPlan({ setups: [setup('psp_a')], product, links: [], only: 'store_ios' });
    expect(one.work).toEqual([]);
    expect(one.providers).toEqual([{ provider: 'store_ios', modes: [] }]);
    expect(one.skipped).toEqual([
      {
        provider: 'store_ios',
        mode: null,
        product: null,
        ok: false,
        skipped: true,
        detail: 'store_ios is not connected to this account',
      },
    ]);
  });
});

describe('events: one per provider of a run', () => {
  const plan = {
    providers: [
      { provider: 'psp_a' as const, modes: ['test' as const, 'live' as const] },
      { provider: 'psp_b' as const, modes: ['test' as const] },
      { provider: 'psp_c' as const, modes: [] },
    ],
    skipped: skippedProviders([setup('psp_c', { is_active: false, modes: [] })]),
  };

  it('a provider that worked records its count or its failures; the others are skipped (why) or nothing to do', () => {
    const failure = {
      provider: 'psp_a' as const,
      mode: 'live' as const,
      product: { id: 'p1', sku: 'a' },
      ok: false,
      skipped: false,
      detail: 'psp_a (live): refused',
    };
    const worked = new Map([['psp_a' as const, workedEvent('psp_a', ['test', 'live'], 3, [failure])]]);
    expect(runEvents(plan, worked)).toEqual([
      {
        provider: 'psp_a',
        status: 'failed',
        reason: 'psp_a (live): refused',
        detail: { outcome: 'failed', synced: 3, failed: 1, modes: ['test', 'live'] },
      },
      {
        provider: 'psp_b',
        status: 'succeeded',
        reason: null,
        detail: { outcome: 'nothing_to_do', synced: 0, failed: 0, modes: ['test'] },
      },
      {
        provider: 'psp_c',
        status: 'skipped',
        reason: 'the psp_c connection is inactive',
        detail: { outcome: 'skipped', synced: 0, failed: 0, modes: [] },
      },
    ]);
  });

  it('a clean write is succeeded with its synced count', () => {
    expect(workedEvent('psp_b', ['test'], 2, [])).toEqual({
      provider: 'psp_b',
      status: 'succeeded',
      reason: null,
      detail: { outcome: 'synced', synced: 2, failed: 0, modes: ['test'] },
    });
  });

  it('a run with nothing to do still yields one event per provider', () => {
    const events = runEvents({ providers: plan.providers, skipped: [] }, new Map());
    expect(events.map((e) => [e.provider, e.status, e.detail.outcome])).toEqual([
      ['psp_a', 'succeeded', 'nothing_to_do'],
      ['psp_b', 'succeeded', 'nothing_to_do'],
      ['psp_c', 'succeeded', 'nothing_to_do'],
    ]);
  });
});
