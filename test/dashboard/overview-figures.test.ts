import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readOverview, type OverviewFigures } from '../../db/overview';
import { withTenant } from '../../db/tenant-tx';
import { overviewModel } from '../../api/dashboard/overview-model';
import { appDb, testDb } from '../helpers/db';
import { newTenant } from '../helpers/api';

/**
 * The overview's figures (db/overview.ts through the page's model) against the same figures
 * computed here by hand from the seeded rows, for one tenant and one mode, beside a second
 * tenant and the other mode whose rows must not count. Read as the api reads them: the login
 * role's connection in a tenant transaction (RLS).
 */

const DAY = 86_400_000;
const todayUtc = () => new Date().toISOString().slice(0, 10);
/** One o'clock UTC, `k` days before today. */
const at = (k: number) => new Date(Date.parse(`${todayUtc()}T01:00:00Z`) - k * DAY);

type Status = 'trialing' | 'active' | 'past_due' | 'canceled' | 'refunded' | 'expired';
interface SeedSub {
  name: string;
  provider: string;
  mode: 'test' | 'live';
  product?: 'monthly' | 'annual' | 'untiered';
  /** Status moves, oldest first: [days ago, status]. The last is the record's status. */
  moves: [number, Status][];
}

const SUBS: SeedSub[] = [
  { name: 's1', provider: 'psp_a', mode: 'test', product: 'monthly', moves: [[40, 'active']] },
  {
    name: 's2',
    provider: 'psp_a',
    mode: 'test',
    product: 'monthly',
    moves: [
      [10, 'trialing'],
      [3, 'active'],
    ],
  },
  { name: 's3', provider: 'psp_a', mode: 'test', product: 'monthly', moves: [[2, 'trialing']] },
  { name: 's4', provider: 'psp_b', mode: 'test', product: 'annual', moves: [[100, 'active']] },
  {
    name: 's5',
    provider: 'psp_b',
    mode: 'test',
    product: 'annual',
    moves: [
      [50, 'active'],
      [1, 'past_due'],
    ],
  },
  {
    name: 's6',
    provider: 'psp_b',
    mode: 'test',
    product: 'monthly',
    moves: [
      [20, 'active'],
      [5, 'canceled'],
    ],
  },
  {
    name: 's7',
    provider: 'psp_a',
    mode: 'test',
    product: 'monthly',
    moves: [
      [35, 'active'],
      [4, 'refunded'],
    ],
  },
  { name: 's8', provider: 'psp_a', mode: 'test', product: 'untiered', moves: [[0, 'active']] },
  { name: 's9', provider: 'psp_b', mode: 'test', moves: [[0, 'active']] },
  {
    name: 's10',
    provider: 'psp_a',
    mode: 'test',
    product: 'monthly',
    moves: [
      [60, 'active'],
      [45, 'canceled'],
    ],
  },
  {
    name: 's11',
    provider: 'store_ios',
    mode: 'test',
    product: 'monthly',
    moves: [
      [80, 'active'],
      [70, 'expired'],
      [12, 'active'],
    ],
  },
  // The other mode: never in a test figure.
  { name: 'l1', provider: 'psp_a', mode: 'live', product: 'monthly', moves: [[2, 'active']] },
  {
    name: 'l2',
    provider: 'psp_a',
    mode: 'live',
    product: 'monthly',
    moves: [
      [2, 'trialing'],
      [1, 'refunded'],
    ],
  },
];

/** Another tenant's rows, busy in the same window and mode: none may leak in. */
const OTHER: SeedSub[] = [
  {
    name: 'b1',
    provider: 'psp_a',
    mode: 'test',
    product: 'monthly',
    moves: [
      [3, 'trialing'],
      [1, 'active'],
    ],
  },
  {
    name: 'b2',
    provider: 'psp_c',
    mode: 'test',
    product: 'monthly',
    moves: [
      [6, 'active'],
      [2, 'refunded'],
    ],
  },
];

async function seedTenant(tenantId: string, subs: SeedSub[], tag: string) {
  const db = testDb();
  // Prices: the monthly product's first price is USD, its later one EUR (records do not carry a currency: the first counts).
  const [monthly] = await db('products')
    .insert({ tenant_id: tenantId, sku: `monthly-${tag}`, tier: 'monthly' })
    .returning('id');
  const [annual] = await db('products')
    .insert({ tenant_id: tenantId, sku: `annual-${tag}`, tier: 'annual' })
    .returning('id');
  const [untiered] = await db('products')
    .insert({ tenant_id: tenantId, sku: `untiered-${tag}` })
    .returning('id');
  await db('prices').insert({
    tenant_id: tenantId,
    product_id: monthly.id,
    country: 'US',
    currency: 'USD',
    amount_minor: 999,
    created_at: at(50),
  });
  await db('prices').insert({
    tenant_id: tenantId,
    product_id: monthly.id,
    country: 'DE',
    currency: 'EUR',
    amount_minor: 899,
    created_at: at(20),
  });
  await db('prices').insert({
    tenant_id: tenantId,
    product_id: annual.id,
    country: 'GB',
    currency: 'GBP',
    amount_minor: 12000,
  });
  await db('prices').insert({
    tenant_id: tenantId,
    product_id: untiered.id,
    country: 'US',
    currency: 'USD',
    amount_minor: 100,
  });
  const productId = { monthly: monthly.id, annual: annual.id, untiered: untiered.id };
  for (const s of subs) {
    const [row] = await db('subscriptions')
      .insert({
        tenant_id: tenantId,
        provider: s.provider,
        mode: s.mode,
        status: s.moves.at(-1)![1],
        external_id: `${s.name}-${tag}`,
        product_id: s.product ? productId[s.product] : null,
        created_at: at(s.moves[0][0]),
      })
      .returning('id');
    // The trigger recorded the insert at now(); the history is replaced by the seeded one.
    await db('subscription_changes').where({ subscription_id: row.id }).del();
    let from: Status | null = null;
    for (const [k, to] of s.moves) {
      await db('subscription_changes').insert({
        tenant_id: tenantId,
        subscription_id: row.id,
        provider: s.provider,
        mode: s.mode,
        from_status: from,
        to_status: to,
        changed_at: at(k),
      });
      from = to;
    }
  }
}

/** The figures, the long way: from the seed list itself, one day and one record at a time. */
function byHand(subs: SeedSub[], mode: 'test' | 'live', days: number) {
  const mine = subs.filter((s) => s.mode === mode);
  const providers = [...new Set(mine.map((s) => s.provider))];
  const status = (s: SeedSub, asOfDaysAgo: number) => [...s.moves].reverse().find(([k]) => k >= asOfDaysAgo)?.[1];
  const dayList = Array.from({ length: days }, (_, i) => days - 1 - i); // days ago, oldest first
  const perDay = (p: string, pick: (from: Status | null, to: Status) => boolean) =>
    dayList.map((k) =>
      mine
        .filter((s) => s.provider === p)
        .reduce(
          (n, s) => n + s.moves.filter(([kk, to], i) => kk === k && pick(i ? s.moves[i - 1][1] : null, to)).length,
          0,
        ),
    );
  return {
    providers,
    now: Object.fromEntries(
      providers.map((p) => {
        const of = mine.filter((s) => s.provider === p);
        const count = (st: Status) => of.filter((s) => s.moves.at(-1)![1] === st).length;
        const moved = (st: Status) =>
          of.reduce((n, s) => n + s.moves.filter(([k, to]) => to === st && k < 30).length, 0);
        return [
          p,
          {
            active: count('active'),
            trialing: count('trialing'),
            past_due: count('past_due'),
            refunds_30d: moved('refunded'),
            cancellations_30d: moved('canceled'),
          },
        ];
      }),
    ),
    active: Object.fromEntries(
      providers.map((p) => [
        p,
        dayList.map((k) => mine.filter((s) => s.provider === p && status(s, k) === 'active').length),
      ]),
    ),
    new_trials: Object.fromEntries(
      providers.map((p) => [p, perDay(p, (from, to) => to === 'trialing' && from !== 'trialing')]),
    ),
    conversions: Object.fromEntries(
      providers.map((p) => [p, perDay(p, (from, to) => from === 'trialing' && to === 'active')]),
    ),
    cancellations: Object.fromEntries(providers.map((p) => [p, perDay(p, (_f, to) => to === 'canceled')])),
    refunds: Object.fromEntries(providers.map((p) => [p, perDay(p, (_f, to) => to === 'refunded')])),
  };
}

describe('overview figures (db/overview.ts) against the same figures by hand', () => {
  const db = testDb();
  let a: string;
  let b: string;
  let newestRun: string;

  beforeAll(async () => {
    a = (await newTenant('overview-a')).tenant_id;
    b = (await newTenant('overview-b')).tenant_id;
    await seedTenant(a, SUBS, 'a');
    await seedTenant(b, OTHER, 'b');
    await db('entitlements').insert([
      { tenant_id: a, app_user_id: 'u1', provider: 'psp_a', state: 'active', is_sandbox: true },
      { tenant_id: a, app_user_id: 'u2', provider: 'psp_a', state: 'active', is_sandbox: true },
      { tenant_id: a, app_user_id: 'u3', provider: 'psp_b', state: 'grace_period', is_sandbox: true },
      { tenant_id: a, app_user_id: 'u4', provider: 'psp_a', state: 'revoked', is_sandbox: true },
      { tenant_id: a, app_user_id: 'u5', provider: 'psp_a', state: 'active', is_sandbox: false },
      { tenant_id: b, app_user_id: 'u1', provider: 'psp_a', state: 'active', is_sandbox: true },
      { tenant_id: b, app_user_id: 'u2', provider: 'psp_b', state: 'grace_period', is_sandbox: true },
    ]);
    const hoursAgo = (h: number) => new Date(Date.now() - h * 3_600_000);
    await db('webhook_deliveries').insert([
      {
        tenant_id: a,
        provider: 'psp_a',
        event_id: `a-f1-${a}`,
        event_type: 'charge.refunded',
        mode: 'test',
        status: 'failed',
        payload: {},
        created_at: hoursAgo(1),
      },
      {
        tenant_id: a,
        provider: 'psp_a',
        event_id: `a-f2-${a}`,
        event_type: 'charge.refunded',
        mode: 'test',
        status: 'failed',
        payload: {},
        created_at: hoursAgo(30),
      },
      {
        tenant_id: a,
        provider: 'psp_b',
        event_id: `a-f3-${a}`,
        event_type: 'charge.refunded',
        mode: 'live',
        status: 'failed',
        payload: {},
        created_at: hoursAgo(2),
      },
      {
        tenant_id: a,
        provider: 'psp_b',
        event_id: `a-p1-${a}`,
        event_type: 'charge.refunded',
        mode: 'test',
        status: 'processed',
        payload: {},
        created_at: hoursAgo(1),
      },
      {
        tenant_id: b,
        provider: 'psp_a',
        event_id: `b-f1-${b}`,
        event_type: 'charge.refunded',
        mode: 'test',
        status: 'failed',
        payload: {},
        created_at: hoursAgo(1),
      },
    ]);
    newestRun = crypto.randomUUID();
    await db('sync_runs').insert([
      { id: crypto.randomUUID(), tenant_id: a, status: 'succeeded', created_at: hoursAgo(5) },
      {
        id: newestRun,
        tenant_id: a,
        status: 'failed',
        workflow_id: `sync-${a}-${newestRun}`,
        created_at: hoursAgo(3),
        finished_at: hoursAgo(2),
      },
      { id: crypto.randomUUID(), tenant_id: b, status: 'running', created_at: hoursAgo(1) },
    ]);
  });
  afterAll(async () => {
    await db('tenants').whereIn('id', [a, b]).del();
  });

  const read = (tenant: string, mode: 'test' | 'live', days: number): Promise<OverviewFigures> =>
    withTenant(appDb(), tenant, (trx) => readOverview(trx, mode, days));

  for (const days of [30, 90]) {
    it(`test mode, ${days} days: every figure and every day equals the hand count, and the other tenant adds nothing`, async () => {
      const f = await read(a, 'test', days);
      const m = overviewModel(f, f.today, days);
      const hand = byHand(SUBS, 'test', days);
      expect(m.days).toHaveLength(days);
      expect(m.days.at(-1)).toBe(todayUtc());
      expect(m.providers.sort()).toEqual(hand.providers.sort());
      for (const p of m.now) expect(p, p.provider).toMatchObject(hand.now[p.provider]);
      for (const key of ['active', 'new_trials', 'conversions', 'cancellations', 'refunds'] as const) {
        for (const s of m.series[key]) expect(s.values, `${key} ${s.label}`).toEqual(hand[key][s.label]);
      }
      // The same facts spelled out, so a mistake in the hand count cannot hide one in the code.
      const psp = (p: string) => m.now.find((x) => x.provider === p)!;
      expect([
        psp('psp_a').active,
        psp('psp_a').trialing,
        psp('psp_b').past_due,
        psp('psp_b').cancellations_30d,
        psp('psp_a').refunds_30d,
      ]).toEqual([3, 1, 1, 1, 1]);
      expect(m.series.active.find((s) => s.label === 'store_ios')!.values.slice(-14)).toEqual([
        0,
        ...new Array(13).fill(1),
      ]);
      expect(m.total.entitlements_active).toBe(2);
      expect(m.total.grace_period).toBe(1);
      expect(m.total.webhook_failures_24h).toBe(1);
      // s1, s2, s11 at the monthly product's first price (USD 9.99, not its later EUR one); s4 at GBP 120.00 a year = 10.00 a month; s8 (no tier) and s9 (no product) unvalued.
      expect(m.mrr).toEqual([
        { currency: 'GBP', mrr_minor: 1000, subscriptions: 1 },
        { currency: 'USD', mrr_minor: 2997, subscriptions: 3 },
      ]);
      expect(m.unpriced).toBe(2);
      expect(f.lastSyncRun?.id).toBe(newestRun);
      expect(f.lastSyncRun?.status).toBe('failed');
    });
  }

  it('live mode counts only live rows: the switch changes every figure', async () => {
    const f = await read(a, 'live', 30);
    const m = overviewModel(f, f.today, 30);
    const hand = byHand(SUBS, 'live', 30);
    expect(m.providers).toEqual(['psp_a', 'psp_b']); // psp_b by its live delivery failure only
    expect(m.now.find((p) => p.provider === 'psp_a')).toMatchObject({
      ...hand.now.psp_a,
      entitlements_active: 1,
      grace_period: 0,
    });
    expect(m.series.new_trials.find((s) => s.label === 'psp_a')!.values).toEqual(hand.new_trials.psp_a);
    expect(m.total.webhook_failures_24h).toBe(1);
    expect(m.mrr).toEqual([{ currency: 'USD', mrr_minor: 999, subscriptions: 1 }]);
  });

  it('the other tenant sees its own figures only', async () => {
    const f = await read(b, 'test', 30);
    const m = overviewModel(f, f.today, 30);
    expect(m.providers).toEqual(['psp_a', 'psp_b', 'psp_c']); // psp_b by its grace-period entitlement
    expect(m.total).toMatchObject({
      active: 1,
      trialing: 0,
      refunds_30d: 1,
      entitlements_active: 1,
      grace_period: 1,
      webhook_failures_24h: 1,
    });
    expect(f.lastSyncRun?.status).toBe('running');
  });

  it('a tenant transaction with another tenant set reads none of these rows', async () => {
    const c = (await newTenant('overview-c')).tenant_id;
    try {
      const f = await read(c, 'test', 90);
      expect([f.subscriptions, f.entitlements, f.priced, f.last30, f.days, f.webhookFailures24h]).toEqual([
        [],
        [],
        [],
        [],
        [],
        [],
      ]);
      expect(f.unpriced).toBe(0);
      expect(f.lastSyncRun).toBeUndefined();
    } finally {
      await db('tenants').where({ id: c }).del();
    }
  });

  it('every status a record takes is recorded by the trigger, whichever writer wrote it, under RLS', async () => {
    const [row] = await withTenant(appDb(), a, (trx) =>
      trx('subscriptions')
        .insert({ tenant_id: a, provider: 'psp_c', mode: 'test', status: 'trialing', external_id: `trigger-${a}` })
        .returning('id'),
    );
    // Each write its own transaction, as each lifecycle write is (now() is the transaction's time).
    for (const status of ['active', 'active', 'canceled']) {
      await withTenant(appDb(), a, (trx) =>
        trx('subscriptions').where({ id: row.id }).update({ status, updated_at: trx.fn.now() }),
      ); // the second is no move: no row
    }
    const moves = await withTenant(appDb(), a, (trx) =>
      trx('subscription_changes')
        .where({ subscription_id: row.id })
        .orderBy('changed_at')
        .select('from_status', 'to_status', 'provider', 'mode', 'tenant_id'),
    );
    expect(moves.map((x) => [x.from_status, x.to_status])).toEqual([
      [null, 'trialing'],
      ['trialing', 'active'],
      ['active', 'canceled'],
    ]);
    expect(moves.every((x) => x.tenant_id === a && x.provider === 'psp_c' && x.mode === 'test')).toBe(true);
    await expect(
      withTenant(appDb(), b, (trx) => trx('subscription_changes').where({ subscription_id: row.id })),
    ).resolves.toEqual([]);
  });
});
