import crypto from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Uniform base62 string from rejection sampling (no modulo bias). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const b of crypto.randomBytes(length * 2)) {
      if (b < 248) out += BASE62[b % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export const SECRET_KEY_PREFIX = 'sk_';
export const SECRET_KEY_RE = /^sk_[0-9A-Za-z]{32,}$/;

export function generateSecretKey(): string {
  return SECRET_KEY_PREFIX + randomBase62(40);
}

export function generatePublishableKey(mode: 'test' | 'live'): string {
  return `pk_${mode}_${randomBase62(32)}`;
}

/** Only this hash is stored; a lost key cannot be recovered. */
export function hashSecretKey(key: string): string {
  return crypto.createHash('sha256').update(key, 'utf8').digest('hex');
}

/** What the dashboard shows to recognise a key: prefix and last four characters. */
export function keyHint(key: string): string {
  return `${key.slice(0, 3)}…${key.slice(-4)}`;
}
