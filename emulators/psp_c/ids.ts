import crypto from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Random base62 string; Razorpay ids and keys use this alphabet. */
export function randomToken(length: number): string {
  const bytes = crypto.randomBytes(length);
  let out = '';
  for (const b of bytes) out += ALPHABET[b % ALPHABET.length];
  return out;
}

/**
 * Razorpay entity ids are `<prefix>_` + 14 base62 characters (item_, plan_, plink_, sub_, pay_, rfnd_, cust_, acc_…).
 */
export const rzpId = (prefix: string): string => `${prefix}_${randomToken(14)}`;

/** Razorpay timestamps are Unix seconds. */
export const nowSec = (): number => Math.floor(Date.now() / 1000);
