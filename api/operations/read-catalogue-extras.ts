import { isPaywallPublished } from '../../domain/paywall';
import { z } from 'zod';
import { notFound } from '../errors';
import { defineOperation } from './types';
import { couponRow, filter, pageOf, paging, paywallBody } from './schemas';
import { iso, isoReq, paginate, whereGiven } from './paging';
import * as s from './serializers';

export const listCoupons = defineOperation({
  name: 'coupons.list',
  summary: 'Discount codes and their per-provider counterparts',
  scope: 'coupons:read',
  write: false,
  input: z.object({ ...paging, code: filter.optional() }).strict(),
  output: pageOf(couponRow),
  rest: { method: 'GET', path: '/coupons' },
  tool: { name: 'billing_coupons', description: 'Discount codes with their counterparts at each provider (filter: code; paged).' },
  async handler(ctx, input) {
    return ctx.tx(async (trx) => {
      // Plain knex, not Coupon.fetchGraph('counterparts'): same statements, but the model path
      // cost +32 % to +82 % req/s in all 4 interleaved runs of bench/models-vs-knex.ts
      // (2026-11-23, 2 shared cores at load 11–16; bench/RESULTS.md), over the 5 % bar.
      const page = await paginate(whereGiven(trx('coupons'), 'coupons', { code: input.code }), { ...input, table: 'coupons' }, (r: any) => r);
      const ids = page.data.map((c: any) => c.id);
      const cps = ids.length ? await trx('coupon_counterparts').whereIn('coupon_id', ids) : [];
      return { ...page, data: page.data.map((c: any) => s.coupon(c, cps.filter((x: any) => x.coupon_id === c.id))) };
    });
  },
});

export const getPaywall = defineOperation({
  name: 'paywall.get',
  summary: 'The published paywall configuration the SDK renders (404 until one is published)',
  scope: 'paywall:read',
  write: false,
  input: z.object({}).strict(),
  output: paywallBody,
  rest: { method: 'GET', path: '/paywall' },
  tool: { name: 'billing_paywall', description: 'The paywall configuration the SDK renders.' },
  errors: [404],
  async handler(ctx) {
    return ctx.tx(async (trx) => {
      const p = await trx('paywalls').first();
      if (!p) throw notFound('paywall (none is configured)');
      // The SDK gets the published config (dashboard: Paywall → Publish). Rows published before
      // published_config existed (migration 007) serve config; a never-published draft is not served.
      const served = p.published_config ?? (p.published_at ? p.config : null);
      if (!served) throw notFound('paywall (a draft exists but none is published)');
      return { id: p.id, object: 'paywall' as const, config: served, published: p.published_at !== null, has_unpublished_changes: !isPaywallPublished(p), published_at: iso(p.published_at), updated_at: isoReq(p.updated_at) };
    });
  },
});
