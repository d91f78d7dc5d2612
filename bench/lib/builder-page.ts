import type { Knex } from 'knex';
import type { Page } from '../../db/paging';

/**
 * A list page built with knex's query builder: the way the lists read before they all moved to
 * `pageFromSql()` (db/paging.ts; docs/data-layer.md, "Reading a list"). Kept here only as the
 * measured alternative (bench/models-vs-knex.ts, the floor's `knex` variants, bench/lib/pieces.ts)
 * and as the reference the written SQL must equal (test/api/entitlement-page.test.ts).
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
    data: rows.map((r: R) => map(r)),
    pagination: { limit: opts.limit, offset: opts.offset, total, has_more: opts.offset + rows.length < total },
  };
}

/** Apply exact-match filters that were given (undefined means "not filtered"). */
export function whereGiven(q: Knex.QueryBuilder, table: string, filters: Record<string, unknown>): Knex.QueryBuilder {
  for (const [col, v] of Object.entries(filters)) if (v !== undefined) q.where(`${table}.${col}`, v as string);
  return q;
}
