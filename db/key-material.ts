import crypto from 'node:crypto';
import { publishableKeyPrefix, SECRET_KEY_PREFIX } from '../domain/keys';
import { revenuecatKeyPrefix, type RevenueCatPlatform } from '../domain/revenuecat';
import type { Mode } from '../domain/providers';

/**
 * Minting and hashing of API keys. They need randomness and node:crypto, so they cannot sit in
 * domain/ (which workflows import, and which does no I/O); domain/keys.ts keeps the key shapes.
 * Here, under db/, because what is hashed here is what api_keys stores (`key_hash`) and what
 * db/api-keys.ts and db/tenants.ts mint: the api (which hashes a presented key to find its row),
 * the admin CLI and the seed import it downwards, and it imports only domain/, so no module of
 * db/ has to reach up into api/ for it.
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

export function generatePublishableKey(mode: Mode): string {
  return publishableKeyPrefix(mode) + randomBase62(32);
}

/** A public key in RevenueCat's format (domain/revenuecat.ts); stored hashed, like a secret key. */
export function generateRevenueCatKey(platform: RevenueCatPlatform, mode: Mode): string {
  return revenuecatKeyPrefix(platform, mode) + randomBase62(32);
}

/** Only this hash is stored; a lost key cannot be recovered. */
export function hashSecretKey(key: string): string {
  return crypto.createHash('sha256').update(key, 'utf8').digest('hex');
}
