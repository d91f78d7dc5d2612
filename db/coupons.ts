import type { Knex } from 'knex';
import type { Row } from './row';
import { paginate, rows, whereGiven, type PageRequest, type RowPage } from './paging';

/**
 * The coupon list page. Plain knex, not Coupon.fetchGraph('counterparts'): same statements, but
 * the model path cost +32 % to +82 % req/s in all 4 interleaved runs of bench/models-vs-knex.ts
 * (2026-11-23, 2 shared cores at load 11–16; bench/RESULTS.md), over the 5 % bar.
 */
export function couponPage(trx: Knex.Transaction, filters: { code?: string }, page: PageRequest): Promise<RowPage> {
  return paginate(whereGiven(trx('coupons'), 'coupons', filters), { ...page, table: 'coupons' }, rows);
}

/** The per-provider counterparts of these coupons (one statement for the whole page). */
export async function counterpartsOf(trx: Knex.Transaction, couponIds: string[]): Promise<Row[]> {
  return couponIds.length ? trx('coupon_counterparts').whereIn('coupon_id', couponIds) : [];
}
