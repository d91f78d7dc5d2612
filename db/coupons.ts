import type { Row } from './row';
import { pageFromSql, readerOf, rows, type PageRequest, type PageSource, type RowPage } from './paging';

/**
 * The coupon list page. Not Coupon.fetchGraph('counterparts'): the model path cost over the 5 %
 * bar in bench/models-vs-knex.ts (bench/RESULTS.md).
 */
export function couponPage(src: PageSource, filters: { code?: string }, page: PageRequest): Promise<RowPage> {
  return pageFromSql(src, { table: 'coupons', columns: 'coupons.*', from: 'coupons', filters }, page, rows);
}

/**
 * The per-provider counterparts of these coupons (one prepared statement for the whole page: the ids are one array
 * parameter).
 */
export async function counterpartsOf(src: PageSource, couponIds: string[]): Promise<Row[]> {
  return couponIds.length
    ? readerOf(src).rows('select * from coupon_counterparts where coupon_id = any($1::uuid[])', [
        `{${couponIds.join(',')}}`,
      ])
    : [];
}
