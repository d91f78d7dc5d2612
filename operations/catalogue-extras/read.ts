import { isPaywallPublished } from '../../domain/paywall';
import { z } from 'zod';
import { counterpartsOf, couponPage } from '../../db/coupons';
import { getPaywallRow } from '../../db/paywalls';
import { notFound } from '../errors';
import { defineOperation } from '../types';
import { couponRow, filter, pageOf, paging, paywallBody } from '../schemas';
import { iso, isoReq } from '../paging';
import { serializeCoupon } from '../serializers';

export const listCoupons = defineOperation({
  name: 'coupons.list',
  summary: 'Discount codes and their per-provider counterparts',
  scope: 'coupons:read',
  write: false,
  input: z.object({ ...paging, code: filter.optional() }).strict(),
  output: pageOf(couponRow),
  rest: { method: 'GET', path: '/coupons' },
  async handler(ctx, input) {
    return ctx.tx(async (trx) => {
      // Not the Coupon model: its path measured over the 5 % bar against the plain statements
      // (db/coupons.ts gives the bench figures).
      const page = await couponPage(trx, { code: input.code }, input);
      const cps = await counterpartsOf(trx, page.data.map((c) => c.id));
      return { ...page, data: page.data.map((c) => serializeCoupon(c, cps.filter((x) => x.coupon_id === c.id))) };
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
  errors: [404],
  async handler(ctx) {
    return ctx.tx(async (trx) => {
      const p = await getPaywallRow(trx);
      if (!p) throw notFound('paywall (none is configured)');
      // The SDK gets the published config (dashboard: Paywall → Publish). Rows published before
      // published_config existed (migration 007) serve config; a never-published draft is not served.
      const served = p.published_config ?? (p.published_at ? p.config : null);
      if (!served) throw notFound('paywall (a draft exists but none is published)');
      return { id: p.id, object: 'paywall' as const, config: served, published: p.published_at !== null, has_unpublished_changes: !isPaywallPublished(p), published_at: iso(p.published_at), updated_at: isoReq(p.updated_at) };
    });
  },
});
