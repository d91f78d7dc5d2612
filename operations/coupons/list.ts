import { z } from 'zod';
import { counterpartsOf, couponPage } from '../../db/coupons';
import type { Row } from '../../db/row';
import { isoReq } from '../paging';
import { filter, id, pageOf, paging, timestamp } from '../schemas';
import { defineOperation } from '../types';

export const couponRow = z.object({
  id: id(),
  object: z.literal('coupon'),
  code: z.string(),
  percent_off: z.number().nullable(),
  amount_off_minor: z.number().nullable(),
  currency: z.string().nullable(),
  duration: z.string(),
  active: z.boolean(),
  counterparts: z.record(z.string(), z.object({ kind: z.string(), external_id: z.string() })),
  created_at: timestamp,
});

export function serializeCoupon(r: Row, counterparts: Row[]) {
  const map: Record<string, { kind: string; external_id: string }> = {};
  for (const c of counterparts) map[c.provider] = { kind: c.kind, external_id: c.external_id };
  return {
    id: r.id,
    object: 'coupon' as const,
    code: r.code,
    percent_off: r.percent_off ?? null,
    amount_off_minor:
      r.amount_off_minor === null || r.amount_off_minor === undefined ? null : Number(r.amount_off_minor),
    currency: r.currency ?? null,
    duration: r.duration,
    active: r.active,
    counterparts: map,
    created_at: isoReq(r.created_at),
  };
}

export const listCoupons = defineOperation({
  name: 'coupons.list',
  summary: 'Discount codes and their per-provider counterparts',
  scope: 'coupons:read',
  write: false,
  input: z.object({ ...paging, code: filter.optional() }).strict(),
  output: pageOf(couponRow),
  rest: { method: 'GET', path: '/coupons' },
  tool: {
    name: 'billing_coupons',
    title: 'Coupons',
    description: 'Discount codes with their counterparts at each provider (filter: code; paged).',
    // The stored counterparts; no provider is asked.
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  async handler(ctx, input) {
    return ctx.read(async (reader) => {
      const page = await couponPage(reader, { code: input.code }, input);
      const cps = await counterpartsOf(
        reader,
        page.data.map((c) => c.id),
      );
      return {
        ...page,
        data: page.data.map((c) =>
          serializeCoupon(
            c,
            cps.filter((x) => x.coupon_id === c.id),
          ),
        ),
      };
    });
  },
});
