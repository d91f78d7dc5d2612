import type { Knex } from 'knex';
import { withTenant } from './tenant-tx';

/** The widest window the overview shows, in UTC days (api/dashboard/overview-page.ts). */
const OVERVIEW_WINDOW_DAYS = 90;

/**
 * Folding the overview's rollups: the triggers only ever insert deltas, so a
 * key's rows pile up between page views; a fold replaces each piled-up key's rows by one row of
 * their sum (a key whose sum is zero goes). Sums are unchanged, so every figure is too.
 *
 * Run in the tenant's transaction (RLS scopes it to the tenant) by the worker's fold job
 * (`foldDueRollups`, started with the worker process: temporal/rollup-folding.ts), never by a
 * read: a page view or a chart only reads. Unfolded deltas are still exact sums; folding only
 * keeps the rows a page reads few. Safe beside writers (they only insert, and a row inserted
 * after the fold's snapshot is left for the next fold) and beside another fold (each delta row
 * is deleted by one statement, and that statement inserts its sum); the advisory lock only
 * spares a second folder the work.
 */

/** Piled-up rows per table (rows beyond one per key) that make the fold job fold a tenant's table. */
export const FOLD_AFTER = 256;

/**
 * Per table: the key, the summed columns, what a folded row must have to stay, and the rows a
 * page view looks at for piled-up deltas (the days of the widest window: the writes' deltas land
 * on today; a delta on an older day, from history written or deleted by hand, is folded with
 * the next fold and is outside every window the page reads).
 */
const TABLES = {
  overview_subscription_counts: {
    key: ['mode', 'provider', 'status', 'product_id'],
    sums: ['n'],
    keep: 'sum(n) <> 0',
    recent: 'true',
  },
  overview_entitlement_counts: {
    key: ['is_sandbox', 'provider', 'state'],
    sums: ['n'],
    keep: 'sum(n) <> 0',
    recent: 'true',
  },
  overview_change_days: {
    key: ['mode', 'provider', 'day'],
    sums: ['changes', 'new_trials', 'conversions', 'cancellations', 'refunds', 'active_delta'],
    keep: 'sum(changes) <> 0',
    recent: `day > (now() at time zone 'UTC')::date - ${OVERVIEW_WINDOW_DAYS}`,
  },
} as const;
type Table = keyof typeof TABLES;

// An equality join (hash join) on the key: product_id may be null.
const joinKey = (alias: string, c: string) =>
  c === 'product_id' ? `coalesce(${alias}.${c}, '00000000-0000-0000-0000-000000000000'::uuid)` : `${alias}.${c}`;

function foldSql(table: Table): string {
  const { key, sums, keep } = TABLES[table];
  const cols = ['tenant_id', ...key];
  return `with piled as (
      select ${cols.join(', ')} from ${table} group by ${cols.join(', ')} having count(*) > 1
    ), gone as (
      delete from ${table} r using piled p where ${cols.map((c) => `${joinKey('r', c)} = ${joinKey('p', c)}`).join(' and ')}
      returning r.*
    )
    insert into ${table} (${[...cols, ...sums].join(', ')})
    select ${[...cols, ...sums.map((s) => `sum(${s})`)].join(', ')} from gone group by ${cols.join(', ')} having ${keep}`;
}

/** Fold the tenant's rollups that have more than FOLD_AFTER piled-up rows; answers the tables folded. */
export async function foldOverviewRollups(trx: Knex.Transaction, threshold = FOLD_AFTER): Promise<Table[]> {
  const tables = Object.keys(TABLES) as Table[];
  // Rows minus keys, by hash aggregates over the few rows a page reads anyway.
  const {
    rows: [piled],
  } = await trx.raw(
    `select ${tables
      .map((t) => {
        const { key, recent } = TABLES[t];
        return `(select count(*) from ${t} where ${recent}) - (select count(*) from (select from ${t} where ${recent} group by ${key.join(', ')}) k) as ${t}`;
      })
      .join(', ')}`,
  );
  const due = tables.filter((t) => Number(piled[t]) > threshold);
  if (due.length === 0) return [];
  const {
    rows: [lock],
  } = await trx.raw(
    `select pg_try_advisory_xact_lock(hashtext('overview-fold'), hashtext(current_setting('app.tenant_id', true))) as got`,
  );
  if (!lock.got) return [];
  for (const t of due) await trx.raw(foldSql(t));
  return due;
}

/**
 * The fold job's pass: every tenant's rollups that have piled up, one tenant transaction each
 * (RLS as for any tenant write). Answers how many tenants were folded.
 */
export async function foldDueRollups(db: Knex, threshold = FOLD_AFTER): Promise<number> {
  // Only the ids of tenants with piled-up deltas: the login role reads no tenant's rows.
  const { rows: tenants } = (await db.raw('select t as id from overview_rollups_due(?) t', [threshold])) as {
    rows: { id: string }[];
  };
  let folded = 0;
  for (const { id } of tenants) {
    if ((await withTenant(db, id, (trx) => foldOverviewRollups(trx, threshold))).length > 0) folded++;
  }
  return folded;
}
