import type { Knex } from 'knex';

export interface Page<T> {
  data: T[];
  pagination: { limit: number; offset: number; total: number | null; has_more: boolean };
}

/**
 * Run a filtered list query as one round trip: rows newest first (ties by id, so order is
 * stable across pages) with the exact total from an uncorrelated count subquery — Postgres
 * counts the filtered index range once instead of materialising and sorting every row, as a
 * `count(*) over()` window would. An offset past the end returns no rows to carry the total,
 * so only then is it counted separately.
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
    .offset(opts.offset);
  let total: number;
  if (rows.length > 0) total = Number(rows[0].__total);
  else if (opts.offset === 0) total = 0;
  else total = Number((await count().first())?.n ?? 0);
  return {
    // The total column rides along on each row; mappers pick their fields, so it never leaves.
    data: rows.map((r: R) => map(r)),
    pagination: { limit: opts.limit, offset: opts.offset, total, has_more: opts.offset + rows.length < total },
  };
}

/** Apply exact-match filters that were given (undefined means "not filtered"). */
export function whereGiven(q: Knex.QueryBuilder, table: string, filters: Record<string, unknown>): Knex.QueryBuilder {
  for (const [col, v] of Object.entries(filters)) if (v !== undefined) q.where(`${table}.${col}`, v as string);
  return q;
}

export const iso = (d: Date | string | null | undefined): string | null => (d ? new Date(d).toISOString() : null);
export const isoReq = (d: Date | string): string => new Date(d).toISOString();
