import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Knex } from 'knex';
import { readOverview, type OverviewFigures } from '../../db/overview';
import { FOLD_AFTER, foldOverviewRollups } from '../../db/overview-rollups';
import { startRollupFolding } from '../../temporal/rollup-folding';
import { createLogger } from '../../runtime/logger';
import { until } from '../helpers/until';
import { withTenant } from '../../db/tenant-tx';
import { appDb, testDb } from '../helpers/db';
import { newTenant } from '../helpers/api';

/**
 * The overview's rollups against the base rows they sum: after random writes
 * of every kind the triggers see (inserts, status, product, mode and state moves, deletes,
 * history written and removed by hand, a product deleted under its records), the figures read
 * from the rollups equal the figures counted from the rows, folded or not, for each tenant,
 * and one tenant's writes never reach another's rollups.
 */

const PROVIDERS = ['psp_a', 'psp_b', 'psp_c', 'store_android', 'store_ios'] as const;
const STATUSES = ['trialing', 'active', 'past_due', 'canceled', 'refunded', 'expired'] as const;
const STATES = ['active', 'grace_period', 'expired', 'revoked'] as const;
const MODES = ['live', 'test'] as const;
const DAY = 86_400_000;

/** A small seeded generator (mulberry32), so a failure replays. */
function rng(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Figures in a fixed order: the statements return groups in no particular one. */
function sorted(f: OverviewFigures) {
  const order = <T>(xs: T[]) => [...xs].map((x) => JSON.stringify(x)).sort();
  return {
    ...f,
    subscriptions: order(f.subscriptions),
    entitlements: order(f.entitlements),
    priced: order(f.priced),
    last30: order(f.last30),
    days: order(f.days),
    webhookFailures24h: order(f.webhookFailures24h),
  };
}

const app = () => appDb();
const read = (tenant: string, mode: 'live' | 'test', days: number, from: 'rollups' | 'rows') =>
  withTenant(app(), tenant, async (trx) => sorted(await readOverview(trx, mode, days, from)));

async function expectRollupsEqualRows(tenant: string) {
  for (const mode of MODES) {
    for (const days of [30, 90]) {
      const rows = await read(tenant, mode, days, 'rows');
      expect(await read(tenant, mode, days, 'rollups'), `${mode}, ${days} days`).toEqual(rows);
    }
  }
}

/** One batch of random writes as the tenant's app role, each write its own transaction (as the webhook path writes). */
async function randomWrites(tenant: string, products: string[], next: () => number, count: number) {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)];
  const tx = <T>(work: (trx: Knex.Transaction) => Promise<T>) => withTenant(app(), tenant, work);
  for (let i = 0; i < count; i++) {
    const r = next();
    const subs: { id: string }[] = await tx((trx) => trx('subscriptions').select('id').orderBy('id'));
    const ents: { id: string }[] = await tx((trx) => trx('entitlements').select('id').orderBy('id'));
    if (r < 0.25 || subs.length === 0) {
      const [s] = await tx((trx) =>
        trx('subscriptions')
          .insert({
            tenant_id: tenant,
            provider: pick(PROVIDERS),
            mode: pick(MODES),
            status: pick(STATUSES),
            product_id: pick([...products, null]),
            external_id: `r-${i}-${Math.floor(next() * 1e9)}`,
          })
          .returning('id'),
      );
      if (next() < 0.7) {
        await tx((trx) =>
          trx('entitlements').insert({
            tenant_id: tenant,
            app_user_id: `u-${s.id}`,
            provider: pick(PROVIDERS),
            subscription_id: s.id,
            state: pick(STATES),
            is_sandbox: next() < 0.5,
          }),
        );
      }
    } else if (r < 0.55) {
      await tx((trx) =>
        trx('subscriptions')
          .where({ id: pick(subs).id })
          .update({ status: pick(STATUSES), updated_at: trx.fn.now() }),
      );
    } else if (r < 0.62) {
      // The lifecycle upsert's shape: every column set again, most unchanged.
      await tx((trx) =>
        trx('subscriptions')
          .where({ id: pick(subs).id })
          .update({ product_id: pick([...products, null]), mode: pick(MODES) }),
      );
    } else if (r < 0.7 && ents.length > 0) {
      await tx((trx) =>
        trx('entitlements')
          .where({ id: pick(ents).id })
          .update({ state: pick(STATES), is_sandbox: next() < 0.5 }),
      );
    } else if (r < 0.76 && ents.length > 0) {
      await tx((trx) =>
        trx('entitlements')
          .where({ id: pick(ents).id })
          .del(),
      );
    } else if (r < 0.82) {
      await tx((trx) =>
        trx('subscriptions')
          .where({ id: pick(subs).id })
          .del(),
      );
    } else if (r < 0.94) {
      // History written by hand, days back (as an import or the seeded tests write it).
      const s = await tx((trx) =>
        trx('subscriptions')
          .where({ id: pick(subs).id })
          .first('id', 'provider', 'mode'),
      );
      await tx((trx) =>
        trx('subscription_changes').insert({
          tenant_id: tenant,
          subscription_id: s.id,
          provider: s.provider,
          mode: s.mode,
          from_status: pick([...STATUSES, null]),
          to_status: pick(STATUSES),
          changed_at: new Date(Date.now() - Math.floor(next() * 120) * DAY - Math.floor(next() * DAY)),
        }),
      );
    } else {
      const changes: { id: string }[] = await tx((trx) => trx('subscription_changes').select('id').orderBy('id'));
      if (changes.length > 0) {
        const c = pick(changes);
        if (next() < 0.5) await tx((trx) => trx('subscription_changes').where({ id: c.id }).del());
        else
          await tx((trx) =>
            trx('subscription_changes')
              .where({ id: c.id })
              .update({ changed_at: new Date(Date.now() - Math.floor(next() * 100) * DAY) }),
          );
      }
    }
  }
}

describe('overview rollups equal the figures counted from the base rows', () => {
  const db = testDb();
  let a: string;
  let b: string;
  const products: Record<string, string[]> = {};

  beforeAll(async () => {
    a = (await newTenant('rollup-a')).tenant_id;
    b = (await newTenant('rollup-b')).tenant_id;
    for (const [t, tag] of [
      [a, 'a'],
      [b, 'b'],
    ]) {
      const rows = await db('products')
        .insert([1, 2, 3].map((k) => ({ tenant_id: t, sku: `rollup-${tag}-${k}`, tier: k === 3 ? null : 'monthly' })))
        .returning('id');
      products[t] = rows.map((r) => r.id);
      await db('prices').insert({
        tenant_id: t,
        product_id: products[t][0],
        country: 'US',
        currency: 'USD',
        amount_minor: 500,
      });
    }
  });
  afterAll(async () => {
    await db('tenants').whereIn('id', [a, b]).del();
  });

  it('after random writes by both tenants, unfolded and folded', async () => {
    const next = rng(23);
    for (let round = 0; round < 3; round++) {
      await randomWrites(a, products[a], next, 60);
      await randomWrites(b, products[b], next, 20);
      // Unfolded (no page view has folded yet: readOverview's own fold waits for FOLD_AFTER rows).
      await expectRollupsEqualRows(a);
      await expectRollupsEqualRows(b);
      // Not vacuous: both modes have records, entitlements and days with changes.
      for (const mode of MODES) {
        const f = await read(a, mode, 90, 'rows');
        expect(
          [f.subscriptions.length, f.entitlements.length, f.days.length].every((x) => x > 0),
          mode,
        ).toBe(true);
      }
      // Folded: one row per key, the same figures.
      expect(await withTenant(app(), a, (trx) => foldOverviewRollups(trx, 0))).not.toEqual([]);
      await expectRollupsEqualRows(a);
      const keys = await withTenant(app(), a, (trx) =>
        trx.raw(
          `select count(*) - count(distinct (mode, provider, status, product_id)) as piled, count(*) filter (where n = 0) as zero from overview_subscription_counts`,
        ),
      );
      expect(keys.rows[0]).toEqual({ piled: 0, zero: 0 });
    }
    // A product deleted under its records: their product_id goes to null (ON DELETE SET NULL), and the rollup follows.
    await db('products').where({ id: products[a][1] }).del();
    products[a].splice(1, 1);
    await expectRollupsEqualRows(a);
    await expectRollupsEqualRows(b);
  });

  it('a tenant sees only its own rollup rows, and another tenant’s writes change none of its figures', async () => {
    const before = await read(a, 'test', 90, 'rollups');
    await randomWrites(b, products[b], rng(7), 25);
    expect(await read(a, 'test', 90, 'rollups')).toEqual(before);
    for (const table of ['overview_subscription_counts', 'overview_entitlement_counts', 'overview_change_days']) {
      const seen = await withTenant(app(), a, (trx) => trx(table).distinct('tenant_id'));
      expect(
        seen.map((r) => r.tenant_id),
        table,
      ).toEqual([a]);
      // A delta naming another tenant is refused by the policy.
      await expect(
        withTenant(app(), a, (trx) => trx(table).where({ tenant_id: a }).limit(1).update({ tenant_id: b })),
      ).rejects.toThrow(/row-level security/);
    }
  });

  it('a page view writes nothing however many deltas pile up; the worker’s fold job folds them, figures unchanged', async () => {
    await randomWrites(a, products[a], rng(99), 10);
    // Enough status moves for the days and counts to pass FOLD_AFTER.
    const [s] = await withTenant(app(), a, (trx) =>
      trx('subscriptions')
        .insert({ tenant_id: a, provider: 'psp_a', mode: 'live', status: 'active', external_id: 'flip' })
        .returning('id'),
    );
    for (let i = 0; i < 300; i++)
      await withTenant(app(), a, (trx) =>
        trx('subscriptions')
          .where({ id: s.id })
          .update({ status: i % 2 ? 'active' : 'past_due' }),
      );
    const piled = async () =>
      Number(
        (
          await withTenant(app(), a, (trx) =>
            trx.raw(`select count(*) - count(distinct (mode, provider, day)) as n from overview_change_days`),
          )
        ).rows[0].n,
      );
    const before = await piled();
    expect(before).toBeGreaterThan(FOLD_AFTER);
    const rows = await read(a, 'live', 30, 'rows');
    const views = await Promise.all([1, 2, 3].map(() => read(a, 'live', 30, 'rollups')));
    for (const v of views) expect(v).toEqual(rows);
    expect(await piled()).toBe(before);
    // The job the worker process starts, on the app's connection as the worker runs it.
    const job = startRollupFolding(app(), createLogger('silent'), 60_000);
    await until('the fold job to fold', piled, (n) => n < 10);
    await job.stop();
    expect(await read(a, 'live', 30, 'rollups')).toEqual(rows);
  });

  it('deleting a tenant takes its rollups with it', async () => {
    const c = (await newTenant('rollup-c')).tenant_id;
    await randomWrites(c, [], rng(5), 15);
    await db('tenants').where({ id: c }).del();
    for (const table of ['overview_subscription_counts', 'overview_entitlement_counts', 'overview_change_days']) {
      expect(await db(table).where({ tenant_id: c }), table).toEqual([]);
    }
  });
});
