import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHARTS } from '../../domain/charts/chart-list';
import { loadConfig } from '../../runtime/config';
import { seedDemoTenant } from '../../seed/demo';
import { ensureDemoHistory } from '../../scripts/demo-history';
import { appDb, testDb } from '../helpers/db';
import { call, keyWith, newTenant, refill, startApi } from '../helpers/api';

/**
 * The demo's year of history (scripts/demo-history.ts) on a tenant seeded like the demo one:
 * written through the lifecycle and store writes, as the login role the worker uses (RLS), with
 * its history dated at the events' times, so every chart of the year has figures; made once; never
 * in production.
 */
describe('the demo history', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let tenantId: string;
  let key: string;
  const now = Date.parse('2026-11-20T12:00:00Z');
  const config = loadConfig({ NODE_ENV: 'test' });
  const lines: string[] = [];
  const counts = async () => ({
    subscriptions: Number((await testDb()('subscriptions').where({ tenant_id: tenantId }).count({ n: '*' }))[0].n),
    changes: Number((await testDb()('subscription_changes').where({ tenant_id: tenantId }).count({ n: '*' }))[0].n),
    products: Number(
      (await testDb()('subscription_product_changes').where({ tenant_id: tenantId }).count({ n: '*' }))[0].n,
    ),
  });

  const demoRecords = () =>
    testDb()('subscriptions')
      .where({ tenant_id: tenantId })
      .whereRaw(`external_id ~ '^(sub_demo_[0-9]{4}|demo-(ios|play)-[0-9]{4})$'`)
      .select('id');

  beforeAll(async () => {
    api = await startApi();
    tenantId = (await newTenant('demo-history')).tenant_id;
    await seedDemoTenant(testDb(), tenantId);
    key = (await keyWith(tenantId, ['charts:read'])).secret_key;
    const made = await ensureDemoHistory(appDb(), config, tenantId, { say: (m) => lines.push(m), now });
    expect(made).toBe('made');
  }, 300_000);
  afterAll(async () => {
    await api.close();
  });

  it('writes a few hundred buyers across every provider, the history dated over the past year', async () => {
    expect(lines.some((l) => /Demo history: \d+ of \d+ buyers/.test(l))).toBe(true);
    const byProvider = await testDb()('subscriptions')
      .where({ tenant_id: tenantId })
      .whereRaw(`external_id ~ '^(sub_demo_[0-9]{4}|demo-(ios|play)-[0-9]{4})$'`)
      .groupBy('provider')
      .select('provider', testDb().raw('count(*)::int as n'));
    const n = Object.fromEntries(byProvider.map((r) => [r.provider, r.n]));
    for (const p of ['psp_a', 'psp_b', 'psp_c', 'store_ios', 'store_android']) expect(n[p]).toBeGreaterThan(10);
    const statuses = (await testDb()('subscription_changes').where({ tenant_id: tenantId }).distinct('to_status')).map(
      (r) => r.to_status,
    );
    expect(statuses.sort()).toEqual(['active', 'canceled', 'expired', 'past_due', 'refunded', 'trialing']);
    const [span] = await testDb()('subscription_changes')
      .where({ tenant_id: tenantId })
      .whereIn('subscription_id', demoRecords())
      .select(testDb().raw('min(changed_at) as first, max(changed_at) as last'));
    expect(Date.parse(span.first)).toBeLessThan(now - 300 * 86_400_000);
    expect(Date.parse(span.last)).toBeLessThanOrEqual(now);
    // Upgrades and downgrades: products changed after the first one, dated in the past too.
    const [moves] = await testDb()('subscription_product_changes')
      .where({ tenant_id: tenantId })
      .whereIn('subscription_id', demoRecords())
      .select(testDb().raw('count(*) - count(distinct subscription_id) as changed, max(changed_at) as last'));
    expect(Number(moves.changed)).toBeGreaterThan(0);
    expect(Date.parse(moves.last)).toBeLessThanOrEqual(now);
    // Countries where the provider says one (Stripe, Paddle, the stores), unknown for Razorpay.
    const countries = await testDb()('subscriptions')
      .where({ tenant_id: tenantId })
      .whereRaw(`external_id ~ '^(sub_demo_[0-9]{4}|demo-(ios|play)-[0-9]{4})$'`)
      .groupBy('provider')
      .select('provider', testDb().raw('count(country)::int as known, count(*)::int as n'));
    for (const c of countries) expect(c.known).toBe(c.provider === 'psp_c' ? 0 : c.n);
  });

  it('every chart of the past year shows figures', async () => {
    await refill(tenantId);
    for (const chart of CHARTS) {
      const r = await call(api.apiUrl, `/charts/${chart.name}?from=2025-12-01&to=2026-11-20`, key);
      expect(r.status, chart.name).toBe(200);
      const body = r.body as { series: { key: string; values: (number | null)[] }[]; cohorts?: { size: number }[] };
      const nonZero = body.series.filter((s) => s.values.some((v) => v !== null && v !== 0));
      expect(nonZero.length, chart.name).toBeGreaterThan(0);
      if (chart.name === 'retention') expect(body.cohorts!.filter((c) => c.size > 0).length).toBeGreaterThan(6);
      if (chart.name === 'revenue_by_country') {
        const keys = nonZero.map((s) => s.key).join(' ');
        for (const country of ['US', 'GB', 'DE', 'JP']) expect(keys, chart.name).toContain(country);
      }
      if (chart.name === 'revenue_by_provider') {
        const keys = nonZero.map((s) => s.key).join(' ');
        for (const p of ['psp_a', 'psp_b', 'psp_c', 'store_ios', 'store_android']) expect(keys).toContain(p);
      }
    }
  });

  it('is made once: a second start adds nothing', async () => {
    const before = await counts();
    expect(await ensureDemoHistory(appDb(), config, tenantId, { say: () => {}, now })).toBe('present');
    expect(await counts()).toEqual(before);
  });

  it('never in production', async () => {
    const other = (await newTenant('demo-history-prod')).tenant_id;
    const prod = { ...config, env: 'production' as const };
    expect(await ensureDemoHistory(appDb(), prod, other, { say: () => {}, now })).toBe('skipped');
    expect(Number((await testDb()('subscriptions').where({ tenant_id: other }).count({ n: '*' }))[0].n)).toBe(0);
  });
});
