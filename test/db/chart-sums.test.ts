import { until } from '../helpers/until';
import { beforeAll, describe, expect, it } from 'vitest';
import { foldChartSums } from '../../db/chart-fold';
import { CHARGED_SUMMED, readChartSums, readSumsState, resolveProduct } from '../../db/chart-sums';
import { readCatalogue } from '../../db/charts';
import { readAsTenant } from '../../db/tenant-read';
import { CHARTS, type ChartName } from '../../domain/charts/chart-list';
import { DAY_MEASURES } from '../../domain/charts/facts';
import { CHART_MEASURES, chartFromSums, dayCompaction } from '../../domain/charts/from-sums';
import { computeChart, readChartSource } from '../helpers/chart-reference';
import { periodsBetween, type Resolution } from '../../domain/charts/periods';
import type { Mode } from '../../domain/providers';
import { makeTenant } from '../helpers/factories';
import { appDb, testDb } from '../helpers/db';
import { seedSubscription } from '../helpers/chart-seed';

/**
 * The chart sums the fold job keeps (db/chart-fold.ts) give every chart exactly what the full
 * computation over every history gives (the reference, test/helpers/chart-reference.ts), for a
 * seeded random tenant written through the tables' triggers: after the first build, after more
 * writes (new moves, product moves, a customer change, a deleted record, new records), after a
 * catalogue change, and after time alone adds a charge. The other tenant's sums stay its own.
 */
const DAY = 86_400_000;

/** A seeded random generator (mulberry32): the same tenant every run. */
function random(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const STATUSES = ['trialing', 'active', 'active', 'active', 'past_due', 'canceled', 'refunded', 'expired'] as const;
const PROVIDERS = ['psp_a', 'psp_b', 'store_ios'];
const COUNTRIES = ['DE', 'US', 'JP', null];

describe('chart sums equal the full computation', () => {
  let a: { tenant_id: string };
  let b: { tenant_id: string };
  const products: string[] = [];
  const subs: string[] = [];
  const rnd = random(47);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)];

  async function product(tenantId: string, sku: string, tier: string | null, prices: [string, string, number][]) {
    const [p] = await testDb()('products').insert({ tenant_id: tenantId, sku, tier }).returning('id');
    for (const [country, currency, amount_minor] of prices)
      await testDb()('prices').insert({ tenant_id: tenantId, product_id: p.id, country, currency, amount_minor });
    return p.id as string;
  }

  async function seedRandom(tenantId: string, n: number) {
    for (let i = 0; i < n; i++) {
      let at = Date.now() - Math.floor(rnd() * 700) * DAY - Math.floor(rnd() * DAY);
      const moves: [string, (typeof STATUSES)[number], string?][] = [];
      const steps = 1 + Math.floor(rnd() * 5);
      for (let k = 0; k < steps && at < Date.now() - 60_000; k++) {
        moves.push([new Date(at).toISOString(), pick(STATUSES), rnd() < 0.2 ? pick(products) : undefined]);
        at += Math.floor(rnd() * 90 * DAY);
      }
      subs.push(
        await seedSubscription(
          tenantId,
          {
            provider: pick(PROVIDERS),
            mode: rnd() < 0.8 ? 'live' : 'test',
            appUserId: rnd() < 0.7 ? `user_${Math.floor(rnd() * 25)}` : undefined,
            country: pick(COUNTRIES),
            moves,
          },
          pick(products),
        ),
      );
    }
  }

  /** Every chart, both ways, for a few windows and filters. */
  async function compareAll(tenantId: string) {
    const windows: [Resolution, string, string][] = [
      ['month', iso(-730), iso(0)],
      ['week', iso(-200), iso(10)],
      ['day', iso(-60), iso(3)],
    ];
    const filters: { mode: Mode; provider?: string; product?: string; country?: string }[] = [
      { mode: 'live' },
      { mode: 'test' },
      { mode: 'live', provider: 'psp_a' },
      { mode: 'live', country: 'DE' },
      { mode: 'live', product: 'month' },
      { mode: 'live', provider: 'store_ios', country: 'US', product: 'year' },
    ];
    await derivedFromFullDimension(tenantId);
    await readAsTenant(appDb(), tenantId, async (reader) => {
      const state = await readSumsState(reader);
      expect(state.built).toBe(true);
      const catalogue = await readCatalogue(reader);
      for (const filter of filters) {
        const source = await readChartSource(reader, filter);
        const product = filter.product ? ((await resolveProduct(reader, filter.product)) ?? '-') : undefined;
        for (const [resolution, from, to] of windows) {
          const periods = periodsBetween(from, to, resolution);
          for (const c of CHARTS) {
            const name = c.name as ChartName;
            const split =
              name === 'revenue_by_provider'
                ? 'provider'
                : name === 'revenue_by_country'
                  ? 'country'
                  : name === 'revenue_by_product'
                    ? 'product'
                    : null;
            const needed = name === 'ltv' ? 'ltv' : name === 'retention' ? 'retention' : 'days';
            const measures = name === 'ltv' || name === 'retention' ? [] : CHART_MEASURES[name];
            const sums = await readChartSums(reader, { ...filter, product }, needed, split, catalogue, measures);
            const got = chartFromSums(name, { ...sums, periods, resolution, now: state.asOf });
            const want = computeChart(name, { ...source, periods, resolution, now: state.asOf });
            expect(got, `${name} ${resolution} ${JSON.stringify(filter)}`).toEqual(want);
            if (needed !== 'days') continue;
            // The days the chart cannot tell apart added up in SQL (what the operation reads): the same chart.
            const compacted = await readChartSums(reader, { ...filter, product }, needed, split, catalogue, measures, {
              ...dayCompaction(periods, state.asOf),
            });
            const gotCompacted = chartFromSums(name, { ...compacted, periods, resolution, now: state.asOf });
            expect(gotCompacted, `compacted ${name} ${resolution} ${JSON.stringify(filter)}`).toEqual(want);
          }
        }
      }
    });
  }
  /**
   * The fold writes each fact once at full dimension and derives the seven other ways to filter in
   * SQL: every such row (its sums not all zero) is the sum of the full-dimension rows it covers,
   * and none is missing.
   */
  async function derivedFromFullDimension(tenantId: string) {
    for (const [table, keys, sums, charged] of [
      ['chart_day_sums', 'day, currency', [...DAY_MEASURES], true],
      ['chart_retention_sums', 'cohort, month', ['size', 'retained'], false],
    ] as const) {
      const nonzero = sums.map((c) => `${c} <> 0`).join(' or ');
      const cols = `pattern, mode, provider_key, product, country, ${keys}${charged ? ', charged' : ''}`;
      const { rows } = await testDb().raw(
        `with stored as (
           select ${cols}, ${sums.join(', ')} from ${table} where tenant_id = :t and pattern <> 7 and (${nonzero})
         ), derived as (
           select (case when grouping(provider_key) = 0 then 1 else 0 end + case when grouping(product) = 0 then 2 else 0 end
                   + case when grouping(country) = 0 then 4 else 0 end
                   ${charged ? `+ case when grouping(charged) = 1 then ${CHARGED_SUMMED} else 0 end` : ''})::smallint as pattern,
                  mode,
                  case when grouping(provider_key) = 1 then '*' else provider_key end as provider_key,
                  case when grouping(product) = 1 then '*' else product end as product,
                  case when grouping(country) = 1 then '*' else country end as country,
                  ${keys}${charged ? `, case when grouping(charged) = 1 then '*' else charged end as charged` : ''},
                  ${sums.map((c) => `sum(${c})::bigint as ${c}`).join(', ')}
             from ${table} where tenant_id = :t and pattern = 7
            group by mode, ${keys}, cube (provider_key, product, country)${charged ? ', grouping sets ((charged), ())' : ''}
         ), d as (select * from derived where pattern <> 7 and (${nonzero}))
         select count(*)::int as n, (select count(*)::int from stored) as stored from (
           (select * from stored except all select * from d) union all (select * from d except all select * from stored)
         ) x`,
        { t: tenantId },
      );
      expect(rows[0].stored, table).toBeGreaterThan(0);
      expect(rows[0].n, `${table}: rows not derived from the full-dimension rows`).toBe(0);
    }
  }
  const iso = (days: number) => new Date(Date.now() + days * DAY).toISOString().slice(0, 10);

  beforeAll(async () => {
    a = await makeTenant('chart-sums-a');
    b = await makeTenant('chart-sums-b');
    products.push(
      await product(a.tenant_id, 'week', 'weekly', [['US', 'USD', 499]]),
      await product(a.tenant_id, 'month', 'monthly', [
        ['DE', 'EUR', 999],
        ['JP', 'JPY', 1200],
        ['US', 'USD', 1099],
      ]),
      await product(a.tenant_id, 'quarter', 'quarterly', [['DE', 'EUR', 2501]]),
      await product(a.tenant_id, 'year', 'annual', [
        ['US', 'USD', 7001],
        ['DE', 'EUR', 6007],
      ]),
      await product(a.tenant_id, 'free', null, []),
    );
    await seedRandom(a.tenant_id, 70);
    const other = await product(b.tenant_id, 'month', 'monthly', [['DE', 'EUR', 500]]);
    await seedSubscription(b.tenant_id, { moves: [[new Date(Date.now() - 40 * DAY).toISOString(), 'active']] }, other);
  }, 120_000);

  it('the day sums table has one column per day measure of domain/charts/facts.ts, the list the fold writes', async () => {
    const { rows } = await testDb().raw(
      `select column_name as name from information_schema.columns
        where table_schema = current_schema() and table_name = 'chart_day_sums' and data_type = 'bigint'
        order by ordinal_position`,
    );
    expect(rows.map((r: { name: string }) => r.name)).toEqual([...DAY_MEASURES]);
  });

  it('after the first build, for every chart, window and filter', async () => {
    expect(await foldChartSums(appDb(), a.tenant_id)).toBeGreaterThan(0);
    await compareAll(a.tenant_id);
  }, 120_000);

  it('after more writes: new moves, product moves, a customer change, a deleted record, new records', async () => {
    const db = testDb();
    for (const id of subs.slice(0, 10)) {
      await db('subscriptions')
        .where({ id })
        .update({ status: pick(STATUSES), product_id: pick(products) });
    }
    await db('subscriptions').where({ id: subs[11] }).update({ app_user_id: 'user_moved' });
    await db('subscriptions').where({ id: subs[12] }).update({ country: 'JP' });
    await db('subscriptions').where({ id: subs[13] }).delete();
    await seedRandom(a.tenant_id, 5);
    const pending = await db('chart_pending').where({ tenant_id: a.tenant_id }).count('* as n');
    expect(Number(pending[0].n)).toBeGreaterThan(0);
    // The worker's pass finds the tenant by the definer function, as the login role (only this tenant is folded
    // here: other files' tenants are theirs).
    const due = (await appDb().raw('select t::text as id from chart_folds_due() t')).rows as { id: string }[];
    expect(due.map((d) => d.id)).toContain(a.tenant_id);
    expect(await foldChartSums(appDb(), a.tenant_id)).toBeGreaterThan(0);
    const left = await db('chart_pending').where({ tenant_id: a.tenant_id }).count('* as n');
    expect(Number(left[0].n)).toBe(0);
    await compareAll(a.tenant_id);
  }, 120_000);

  it('after a catalogue change (every sum built again)', async () => {
    await testDb()('prices').insert({
      tenant_id: a.tenant_id,
      product_id: products[2],
      country: 'US',
      currency: 'USD',
      amount_minor: 3000,
    });
    expect(await foldChartSums(appDb(), a.tenant_id)).toBeGreaterThan(5);
    await compareAll(a.tenant_id);
  }, 120_000);

  it('after time alone adds a charge: the due subscription is counted again', async () => {
    const db = testDb();
    // A weekly subscription whose next charge comes two seconds from now.
    const soon = Date.now() - 7 * DAY + 2000;
    const id = await seedSubscription(
      a.tenant_id,
      { country: 'US', moves: [[new Date(soon).toISOString(), 'active']] },
      products[0],
    );
    await foldChartSums(appDb(), a.tenant_id);
    const [row] = await db('chart_subscription_facts').where({ subscription_id: id }).select('due');
    expect(new Date(row.due).getTime()).toBe(soon + 7 * DAY);
    // Wait for the database's clock to pass it (a condition, polled with a deadline), then the pass counts it again.
    await until(
      'the charge is due by the database clock',
      async () => (await db.raw('select ?::timestamptz <= now() as due', [row.due])).rows[0].due as boolean,
      (due) => due,
      10_000,
    );
    expect(await foldChartSums(appDb(), a.tenant_id)).toBeGreaterThanOrEqual(1);
    const [after] = await db('chart_subscription_facts').where({ subscription_id: id }).select('due');
    expect(new Date(after.due).getTime()).toBe(soon + 14 * DAY);
    await compareAll(a.tenant_id);
  }, 120_000);

  it("another tenant's sums are its own: built by its own fold, invisible to the first", async () => {
    await foldChartSums(appDb(), b.tenant_id);
    await readAsTenant(appDb(), b.tenant_id, async (reader) => {
      const catalogue = await readCatalogue(reader);
      const sums = await readChartSums(reader, { mode: 'live' }, 'days', null, catalogue);
      expect(new Set(sums.days.map((d) => d.currency))).toEqual(new Set(['', 'EUR']));
    });
    await compareAll(b.tenant_id);
  }, 120_000);
});
