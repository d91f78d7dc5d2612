import type { Knex } from 'knex';
import type { Mode } from '../domain/providers';
import type { PricedGroup } from '../domain/mrr';
import { recentRuns, type RunRow } from './sync-runs';

/**
 * Every figure of the dashboard's overview (docs/dashboard.md, "Overview"), read in the
 * caller's tenant transaction: row-level security scopes each statement to the tenant, and
 * every statement also names the mode, so a test figure never counts a live row.
 *
 * The "now" counts and the daily series come from the rollups of the schema (a few hundred
 * rows, whatever the tenant's size; the worker folds piled-up deltas, a read never writes:
 * db/overview-rollups.ts); `from: 'rows'` counts the same figures from the base rows, as the
 * page did before them: the reference the tests and bench/overview.ts compare the rollups with.
 * The 30-day and 24-hour figures are rolling windows (not whole days) and stay on the base rows,
 * by the schema's index and webhook_deliveries' (tenant_id, created_at).
 */
export type OverviewSource = 'rollups' | 'rows';

export interface CountRow {
  provider: string;
  key: string;
  n: number;
}

export interface DayRow {
  provider: string;
  /** UTC day, YYYY-MM-DD. */
  day: string;
  new_trials: number;
  conversions: number;
  cancellations: number;
  refunds: number;
  /** Records that became active that day minus those that stopped being active. */
  active_delta: number;
}

export interface OverviewFigures {
  /**
   * The database's UTC day, YYYY-MM-DD: the window ends on it (now() is the transaction's start, the same for every
   * statement).
   */
  today: string;
  subscriptions: CountRow[];
  entitlements: CountRow[];
  priced: PricedGroup[];
  /** Active subscriptions whose product has no tier or no price: counted, not valued. */
  unpriced: number;
  /** Per provider: refunds and cancellations recorded in the last 30 days. */
  last30: { provider: string; refunds: number; cancellations: number }[];
  days: DayRow[];
  /** Per provider: inbound deliveries that failed in the last 24 hours. */
  webhookFailures24h: { provider: string; n: number }[];
  lastSyncRun: RunRow | undefined;
  /** Access granted by hand and still running (docs/support.md): counted apart from paid access, in either mode. */
  activeGrants: number;
}

const n = (v: unknown) => Number(v ?? 0);

/**
 * Subscription records of the mode by provider and status, and the active ones valued, from
 * one pass over the rollup (or the index `subscriptions_overview`): counted per product first,
 * then the few groups are joined to the catalogue. A record does not carry the buyer's
 * currency, so each active one is valued at its product's first price (the earliest set); a
 * product priced in several currencies counts in that one. Active records whose product has no
 * tier or no price are counted, not valued.
 */
async function subscriptionFigures(
  trx: Knex.Transaction,
  mode: Mode,
  from: OverviewSource,
): Promise<{ counts: CountRow[]; priced: PricedGroup[]; unpriced: number }> {
  const countSql =
    from === 'rollups'
      ? 'select provider, status, product_id, sum(n) as n from overview_subscription_counts where mode = ? group by provider, status, product_id having sum(n) <> 0'
      : 'select provider, status, product_id, count(*) as n from subscriptions where mode = ? group by provider, status, product_id';
  const { rows } = await trx.raw(
    `with counts as (${countSql}), first_price as (
       select distinct on (product_id) product_id, currency, amount_minor from prices order by product_id, created_at, id
     )
     select c.provider, c.status, c.n, p.tier, fp.currency, fp.amount_minor
       from counts c
       left join products p on p.id = c.product_id
       left join first_price fp on fp.product_id = c.product_id`,
    [mode],
  );
  const counts = new Map<string, CountRow>();
  const priced = new Map<string, PricedGroup>();
  let unpriced = 0;
  for (const r of rows as {
    provider: string;
    status: string;
    n: string;
    tier: PricedGroup['tier'] | null;
    currency: string | null;
    amount_minor: string | null;
  }[]) {
    const key = `${r.provider}\n${r.status}`;
    const c = counts.get(key) ?? { provider: r.provider, key: r.status, n: 0 };
    c.n += n(r.n);
    counts.set(key, c);
    if (r.status !== 'active') continue;
    if (!r.tier || !r.currency) {
      unpriced += n(r.n);
      continue;
    }
    const g = priced.get(`${r.tier}\n${r.currency}`) ?? {
      tier: r.tier,
      currency: r.currency,
      subscriptions: 0,
      amount_minor: 0,
    };
    g.subscriptions += n(r.n);
    g.amount_minor += n(r.n) * n(r.amount_minor);
    priced.set(`${r.tier}\n${r.currency}`, g);
  }
  return { counts: [...counts.values()], priced: [...priced.values()], unpriced };
}

/** Entitlements of the mode's side (sandbox for test) by provider and state. */
async function entitlementCounts(trx: Knex.Transaction, mode: Mode, from: OverviewSource): Promise<CountRow[]> {
  const rows =
    from === 'rollups'
      ? await trx('overview_entitlement_counts')
          .where({ is_sandbox: mode === 'test' })
          .groupBy('provider', 'state')
          .havingRaw('sum(n) <> 0')
          .select('provider', 'state as key')
          .sum({ n: 'n' })
      : await trx('entitlements')
          .where({ is_sandbox: mode === 'test' })
          .groupBy('provider', 'state')
          .select('provider', 'state as key')
          .count({ n: '*' });
  return (rows as unknown as Record<string, unknown>[]).map((r) => ({
    provider: String(r.provider),
    key: String(r.key),
    n: n(r.n),
  }));
}

async function lastThirtyDays(trx: Knex.Transaction, mode: Mode): Promise<OverviewFigures['last30']> {
  const rows = await trx('subscription_changes')
    .where({ mode })
    .whereIn('to_status', ['refunded', 'canceled'])
    .where('changed_at', '>=', trx.raw(`now() - interval '30 days'`))
    .groupBy('provider')
    .select('provider')
    .select(
      trx.raw(`count(*) filter (where to_status = 'refunded') as refunds`),
      trx.raw(`count(*) filter (where to_status = 'canceled') as cancellations`),
    );
  return rows.map((r) => ({ provider: String(r.provider), refunds: n(r.refunds), cancellations: n(r.cancellations) }));
}

/**
 * The window's changes per provider and UTC day (a day with any change, even one that moves no
 * figure). Active subscriptions on a past day are derived from today's count and the later
 * days' deltas, so the statement reads only the window, never the whole history.
 */
async function dailyChanges(trx: Knex.Transaction, mode: Mode, days: number, from: OverviewSource): Promise<DayRow[]> {
  const { rows } = await trx.raw(
    from === 'rollups'
      ? `select provider, to_char(day, 'YYYY-MM-DD') as day, sum(new_trials) as new_trials, sum(conversions) as conversions,
                sum(cancellations) as cancellations, sum(refunds) as refunds, sum(active_delta) as active_delta
           from overview_change_days
          where mode = ? and day >= (now() at time zone 'UTC')::date - ?::int + 1
          group by provider, day
         having sum(changes) <> 0`
      : `select provider, to_char((changed_at at time zone 'UTC')::date, 'YYYY-MM-DD') as day,
            count(*) filter (where to_status = 'trialing' and from_status is distinct from 'trialing') as new_trials,
            count(*) filter (where from_status = 'trialing' and to_status = 'active') as conversions,
            count(*) filter (where to_status = 'canceled') as cancellations,
            count(*) filter (where to_status = 'refunded') as refunds,
            sum((to_status = 'active')::int - coalesce(from_status = 'active', false)::int) as active_delta
       from subscription_changes
      where mode = ?
        and changed_at >= ((now() at time zone 'UTC')::date - ?::int + 1)::timestamp at time zone 'UTC'
      group by 1, 2`,
    [mode, days],
  );
  return (rows as Record<string, unknown>[]).map((r) => ({
    provider: String(r.provider),
    day: String(r.day),
    new_trials: n(r.new_trials),
    conversions: n(r.conversions),
    cancellations: n(r.cancellations),
    refunds: n(r.refunds),
    active_delta: n(r.active_delta),
  }));
}

async function webhookFailures(trx: Knex.Transaction, mode: Mode): Promise<OverviewFigures['webhookFailures24h']> {
  const rows = await trx('webhook_deliveries')
    .where({ mode, status: 'failed' })
    .where('created_at', '>=', trx.raw(`now() - interval '24 hours'`))
    .groupBy('provider')
    .select('provider')
    .count({ n: '*' });
  return (rows as unknown as Record<string, unknown>[]).map((r) => ({ provider: String(r.provider), n: n(r.n) }));
}

/** All of the overview's figures for one mode and a window of `days` UTC days ending today. */
export async function readOverview(
  trx: Knex.Transaction,
  mode: Mode,
  days: number,
  from: OverviewSource = 'rollups',
): Promise<OverviewFigures> {
  // One after another: a transaction is one connection.
  const {
    rows: [{ today }],
  } = await trx.raw(`select to_char((now() at time zone 'UTC')::date, 'YYYY-MM-DD') as today`);
  const { counts: subscriptions, priced, unpriced } = await subscriptionFigures(trx, mode, from);
  const entitlements = await entitlementCounts(trx, mode, from);
  const last30 = await lastThirtyDays(trx, mode);
  const dayRows = await dailyChanges(trx, mode, days, from);
  const webhookFailures24h = await webhookFailures(trx, mode);
  const [lastSyncRun] = await recentRuns(trx, 1);
  const [{ grants }] = (await trx('entitlement_grants').where({ state: 'active' }).count({ grants: '*' })) as {
    grants: string | number;
  }[];
  return {
    today: String(today),
    subscriptions,
    entitlements,
    priced,
    unpriced,
    last30,
    days: dayRows,
    webhookFailures24h,
    lastSyncRun,
    activeGrants: n(grants),
  };
}
