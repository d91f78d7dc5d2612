import crypto from 'node:crypto';
import { SECRET_KEY_PREFIX } from '../domain/keys';

/**
 * Key generation and hashing: randomness and a hash function, so not in domain/ (which
 * workflows import). Beside auth, which is the reader; a leaf module (node:crypto and
 * domain/ only) so db/tenants.ts, the admin CLI and the seed import it without cycles.
 */

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

export { keyHint } from '../domain/keys';
