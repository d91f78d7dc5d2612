import { ProviderRejectedError } from '../errors';
import type { CouponSpec } from '../types';
import { fieldOf, PROVIDER, type RazorpayClient } from './client';

/**
 * A coupon's counterpart at the regional provider is an "offer". Razorpay creates offers in
 * its Dashboard only; /v1/offers is the emulator's stand-in (see emulators/psp_c/offers.ts).
 * The code is the identity: an existing offer with the coupon's code is the counterpart,
 * so a retry never makes a second one.
 */
interface RzpOffer {
  id: string;
  code: string;
}

async function byCode(client: RazorpayClient, code: string): Promise<RzpOffer | undefined> {
  const rows = await client.listAll<RzpOffer>('/v1/offers', { code });
  return rows.find((o) => o.code.toLowerCase() === code.toLowerCase());
}

export async function ensureOffer(client: RazorpayClient, coupon: CouponSpec): Promise<{ kind: string; external_id: string }> {
  const found = await byCode(client, coupon.code);
  if (found) return { kind: 'offer', external_id: found.id };
  const discount: Record<string, unknown> = {};
  if (coupon.percent_off != null) discount.percent_rate = Math.round(coupon.percent_off * 100);
  else if (coupon.amount_off_minor != null && coupon.currency) Object.assign(discount, { flat_discount: coupon.amount_off_minor, currency: coupon.currency.toUpperCase() });
  else throw new ProviderRejectedError(PROVIDER, `coupon ${coupon.code} has neither a percentage nor an amount with currency`, { code: 'no_discount' });
  try {
    const created = await client.call<RzpOffer>('POST', '/v1/offers', {
      body: { name: coupon.code, code: coupon.code, duration: coupon.duration, ...discount, notes: { coupon_id: coupon.coupon_id, tenant_id: coupon.tenant_id } },
    });
    return { kind: 'offer', external_id: created.id };
  } catch (err) {
    if (fieldOf(err) !== 'code') throw err;
    const raced = await byCode(client, coupon.code);
    if (!raced) throw err;
    return { kind: 'offer', external_id: raced.id };
  }
}
