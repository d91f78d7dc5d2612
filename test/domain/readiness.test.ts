import { describe, expect, it } from 'vitest';
import { readinessReport, type ReadinessFacts } from '../../domain/readiness';
import type { ProviderId } from '../../domain/providers';

const ctx = { dashboardUrl: 'https://dash.example' };
const green = (provider: ProviderId, over: Partial<ReadinessFacts> = {}): ReadinessFacts => ({
  provider,
  is_active: true,
  has_test_credential: true,
  has_live_credential: true,
  has_webhook_secret: true,
  products: 2,
  synced_test: 2,
  synced_live: 2,
  sandbox_evidence: true,
  ...over,
});
const row = (f: ReadinessFacts) => readinessReport([f], ctx).providers[0];
const summary = (fs: ReadinessFacts[]) => readinessReport(fs, ctx).summary;

describe('web providers (key_pair, test_api_key)', () => {
  it.each(['psp_a', 'psp_b', 'psp_c'] as const)(
    '%s green in both modes: no human action, no steps, no console',
    (p) => {
      expect(row(green(p))).toMatchObject({
        provider: p,
        auth_kind: 'key_pair',
        test_mechanism: 'test_api_key',
        is_active: true,
        live_ready: true,
        test_ready: true,
        human_action: null,
        manual_steps: null,
        console_url: null,
      });
    },
  );

  // Each row: the facts changed from green → expected booleans and the first missing thing.
  it.each<[string, Partial<ReadinessFacts>, boolean, boolean, RegExp]>([
    ['no test credential', { has_test_credential: false }, false, true, /test credential/],
    ['test credential but no test sync', { synced_test: 0 }, false, true, /Run a sync/],
    ['no products at all', { products: 0, synced_test: 0, synced_live: 0 }, false, false, /Create a product/],
    ['no live credential', { has_live_credential: false }, true, false, /live credential/],
    ['no webhook signing secret', { has_webhook_secret: false }, true, false, /webhook signing secret/],
    ['no live sync', { synced_live: 0 }, true, false, /Run a sync/],
    ['inactive connection', { is_active: false }, false, false, /Reactivate/],
    [
      'test missing first, then live: the test gap is named',
      { has_test_credential: false, has_live_credential: false },
      false,
      false,
      /test credential/,
    ],
  ])('%s', (_name, over, test, live, action) => {
    const r = row(green('psp_a', over));
    expect(r.test_ready).toBe(test);
    expect(r.live_ready).toBe(live);
    expect(r.human_action).toMatch(action);
    expect(r.manual_steps).toBeNull();
    expect(r[test ? 'test_detail' : 'test_detail']).toMatch(test ? /^Test:/ : /^Not ready:/);
    expect(r.live_detail).toMatch(live ? /^Live:/ : /^Not ready:/);
  });

  it('sandbox evidence means nothing for a web provider: configuration proves it', () => {
    expect(row(green('psp_b', { sandbox_evidence: false })).test_ready).toBe(true);
    expect(row(green('psp_b', { sandbox_evidence: true, has_test_credential: false })).test_ready).toBe(false);
  });
});

describe('stores (store; license_tester / sandbox_apple_id)', () => {
  it.each<[ProviderId, string, string]>([
    ['store_android', 'license_tester', 'https://play.google.com/console'],
    ['store_ios', 'sandbox_apple_id', 'https://appstoreconnect.apple.com'],
  ])(
    '%s: never test-ready by configuration; ordered manual steps and a console until a sandbox purchase arrives',
    (p, mech, console) => {
      const before = row(green(p, { sandbox_evidence: false }));
      expect(before).toMatchObject({
        auth_kind: 'store',
        test_mechanism: mech,
        test_ready: false,
        console_url: console,
      });
      expect(before.manual_steps!.length).toBeGreaterThanOrEqual(4);
      expect(before.manual_steps!.join(' ')).toContain(`https://dash.example/api/webhooks/${p}`);
      expect(before.human_action).toMatch(/sandbox purchase/);
      const after = row(green(p, { sandbox_evidence: true }));
      expect(after).toMatchObject({
        test_ready: true,
        manual_steps: null,
        console_url: null,
        human_action: null,
        live_ready: true,
      });
    },
  );

  it('a store with evidence but no credential is test-ready and not live-ready', () => {
    const r = row(green('store_ios', { has_live_credential: false, has_test_credential: false }));
    expect(r.test_ready).toBe(true);
    expect(r.live_ready).toBe(false);
    expect(r.human_action).toMatch(/store API credential/);
  });

  it('a store needs no webhook signing secret for live', () => {
    expect(row(green('store_android', { has_webhook_secret: false })).live_ready).toBe(true);
  });
});

describe('summary', () => {
  it('counts add up from the rows; needs_manual_action counts rows whose next step needs a person', () => {
    const facts = [
      green('psp_a'), // green
      green('psp_b', { synced_test: 0 }), // next step automatable (a sync)
      green('psp_c', { has_webhook_secret: false }), // a person enters the secret
      green('store_android', { sandbox_evidence: false }), // a person with a device
      green('store_ios'), // green
    ];
    expect(summary(facts)).toEqual({ total: 5, needs_manual_action: 2, live_ready: 4, test_ready: 3 });
    expect(summary([])).toEqual({ total: 0, needs_manual_action: 0, live_ready: 0, test_ready: 0 });
  });

  it('rows keep the order of the facts (the spec provider order from the repository)', () => {
    expect(readinessReport([green('psp_c'), green('store_ios')], ctx).providers.map((p) => p.provider)).toEqual([
      'psp_c',
      'store_ios',
    ]);
  });
});
