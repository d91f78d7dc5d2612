import type { Row } from './row';
import type { Knex } from 'knex';
import { isoTimestampTypes } from './timestamps';
import type { TenantReader } from './tenant-read';

/** One page of a list, as every list endpoint answers it. */
export interface Page<T> {
  data: T[];
  pagination: { limit: number; offset: number; total: number | null; has_more: boolean };
}

/** Which page the caller asked for (already clamped by the input schema). */
export interface PageRequest {
  limit: number;
  offset: number;
}

/**
 * Run a filtered list query as one round trip: rows newest first (ties by id, so order is
 * stable across pages) with the exact total from an uncorrelated count subquery — Postgres
 * counts the filtered index range once instead of materialising and sorting every row, as a
 * `count(*) over()` window would. An offset past the end returns no rows to carry the total,
 * so only then is it counted separately. A page's SQL text depends only on which filters are
 * given (values, limit and offset are parameters), so it runs as a prepared statement
 * (db/knex.ts): planning cost more than executing it.
 */
export async function paginate<R, T>(
  base: Knex.QueryBuilder,
  opts: { limit: number; offset: number; table: string; columns?: (string | Knex.Raw)[] },
  map: (row: R) => T,
): Promise<Page<T>> {
  const count = () => base.clone().clearSelect().clearOrder().count({ n: '*' });
  const rows = await base
    .clone()
    .select(opts.columns ?? [`${opts.table}.*`])
    .select({ __total: count() })
    .orderBy([
      { column: `${opts.table}.created_at`, order: 'desc' },
      { column: `${opts.table}.id`, order: 'desc' },
    ])
    .limit(opts.limit)
    .offset(opts.offset)
    .options({ prepare: true });
  let total: number;
  if (rows.length > 0) total = Number(rows[0].__total);
  else if (opts.offset === 0) total = 0;
  else total = Number((await count().first().options({ prepare: true }))?.n ?? 0);
  return {
    // The total column rides along on each row; mappers pick their fields, so it never leaves.
    data: rows.map((r: R) => map(r)),
    pagination: { limit: opts.limit, offset: opts.offset, total, has_more: opts.offset + rows.length < total },
  };
}

/** A list's statement as SQL: `from` its FROM clause (joins included), `filters` exact matches on `table`'s columns. */
export interface PageSql {
  table: string;
  columns: string;
  from: string;
  filters: Record<string, string | boolean | undefined>;
}

/**
 * The same page as `paginate()` (same rows, order, total and envelope) for the hottest list,
 * written as SQL instead of built by knex: the builder's clones and compilation cost more node
 * CPU per request than the page's own rows (bench/RESULTS.md). Filter names are code, never
 * input; their values are parameters. Prepared, like `paginate()`. It runs in a tenant read
 * (db/tenant-read.ts), and its time columns arrive as the API's ISO strings (db/timestamps.ts),
 * not Dates: its rows go straight to a serializer.
 */
export async function pageFromSql<T>(reader: TenantReader, q: PageSql, page: PageRequest, map: (row: Row) => T): Promise<Page<T>> {
  const conds: string[] = [];
  const values: (string | boolean | number)[] = [];
  for (const [col, v] of Object.entries(q.filters)) {
    if (v === undefined) continue;
    if (!/^[a-z_]+$/.test(col)) throw new Error(`pageFromSql: bad column ${col}`);
    values.push(v);
    conds.push(`${q.table}.${col} = $${values.length}`);
  }
  const where = conds.length ? ` where ${conds.join(' and ')}` : '';
  const count = `select count(*) as n from ${q.from}${where}`;
  const n = values.length;
  const found = await reader.rows(
    `select ${q.columns}, (${count}) as __total from ${q.from}${where} order by ${q.table}.created_at desc, ${q.table}.id desc limit $${n + 1} offset $${n + 2}`,
    [...values, page.limit, page.offset],
    { types: isoTimestampTypes },
  );
  let total: number;
  if (found.length > 0) total = Number(found[0].__total);
  else if (page.offset === 0) total = 0;
  else total = Number((await reader.rows(count, values))[0]?.n ?? 0);
  return {
    data: found.map((r: Row) => map(r)),
    pagination: { limit: page.limit, offset: page.offset, total, has_more: page.offset + found.length < total },
  };
}

/** Apply exact-match filters that were given (undefined means "not filtered"). */
export function whereGiven(q: Knex.QueryBuilder, table: string, filters: Record<string, unknown>): Knex.QueryBuilder {
  for (const [col, v] of Object.entries(filters)) if (v !== undefined) q.where(`${table}.${col}`, v as string);
  return q;
}

/** A page of raw rows: the caller's serializer picks the public fields (and drops `__total`). */
export type RowPage = Page<Row>;

export const rows = (r: Row) => r;
