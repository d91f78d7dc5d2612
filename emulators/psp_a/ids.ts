import crypto from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export function randomBase62(length: number): string {
  const bytes = crypto.randomBytes(length);
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHABET[bytes[i] % 62];
  return out;
}

/** Stripe-looking ids: `prod_…`, `price_…`, `plink_…`, `promo_…`, `cus_…`, `sub_…`, `evt_…`. */
export function newId(prefix: string, length = 24): string {
  return `${prefix}_${randomBase62(length)}`;
}

/** Stripe generates coupon ids without a prefix: eight upper-case alphanumerics. */
export function newCouponId(): string {
  const bytes = crypto.randomBytes(8);
  let out = '';
  for (let i = 0; i < 8; i++) out += ALPHABET[bytes[i] % 36];
  return out;
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
