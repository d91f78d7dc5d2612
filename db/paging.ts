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

/** A list's statement as SQL: `from` its FROM clause (joins included), `filters` exact matches on `table`'s columns. */
export interface PageSql {
  table: string;
  columns: string;
  from: string;
  filters: Record<string, string | boolean | undefined>;
  /** Values `from` itself refers to as $1, $2, …; the filters are numbered after them. */
  fromValues?: string[];
}

/**
 * Where a list reads: a tenant read (`ctx.read`, db/tenant-read.ts), which every list endpoint
 * uses, or a tenant transaction for the callers that already hold one (a dashboard page, a
 * handler that checks something first). Either way under RLS, the same statements.
 */
export type PageSource = TenantReader | Knex.Transaction;

/**
 * A tenant transaction as a reader: the same `$n` statements, each run prepared (db/knex.ts).
 * knex numbers its own placeholders, so each `$n` becomes a `?` with its value repeated.
 */
export function readerOf(src: PageSource): TenantReader {
  if (typeof src !== 'function') return src;
  return {
    async rows(sql, values, opts) {
      const bindings: unknown[] = [];
      const text = sql.replace(/\$(\d+)/g, (_, n: string) => {
        bindings.push(values[Number(n) - 1]);
        return '?';
      });
      const res = await src
        .raw(text, bindings as Knex.RawBinding[])
        .options({ prepare: true, ...(opts?.types ? { types: opts.types } : {}) });
      return (res as { rows: Row[] }).rows;
    },
  };
}

/**
 * The one way every list reads its page (docs/data-layer.md, "Reading a list"): a statement
 * written as SQL, rows newest first (ties by id, so order is stable across pages) with the exact
 * total from an uncorrelated count subquery — Postgres counts the filtered index range once
 * instead of materialising and sorting every row, as a `count(*) over()` window would. An offset
 * past the end returns no rows to carry the total, so only then is it counted separately. Not
 * the knex builder nor a model: their clones and compilation cost more node CPU per request than
 * the page's own rows (bench/RESULTS.md). A page's SQL text depends only on which filters are
 * given (filter names are code, never input; values, limit and offset are parameters), so it
 * runs as a prepared statement: planning cost more than executing it. Time columns arrive as the
 * API's ISO strings (db/timestamps.ts), not Dates: the rows go straight to a serializer.
 */
export async function pageFromSql<T>(
  src: PageSource,
  q: PageSql,
  page: PageRequest,
  map: (row: Row) => T,
): Promise<Page<T>> {
  const reader = readerOf(src);
  const conds: string[] = [];
  const values: (string | boolean | number)[] = [...(q.fromValues ?? [])];
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
    // The total column rides along on each row; mappers pick their fields, so it never leaves.
    data: found.map((r: Row) => map(r)),
    pagination: { limit: page.limit, offset: page.offset, total, has_more: page.offset + found.length < total },
  };
}

/** A page of raw rows: the caller's serializer picks the public fields (and drops `__total`). */
export type RowPage = Page<Row>;

export const rows = (r: Row) => r;
