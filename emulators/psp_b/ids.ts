import crypto from 'node:crypto';

// Paddle ids are `<prefix>_` + a lowercase ULID (26 Crockford base32 characters), so they
// sort by creation time; list endpoints page by id, which only works if that order holds.
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
let lastMs = -1;
let lastRandom: number[] = [];

function randomDigits(): number[] {
  const bytes = crypto.randomBytes(16);
  return Array.from(bytes, (b) => b % 32);
}

function ulid(): string {
  const now = Date.now();
  if (now <= lastMs) {
    // Same millisecond (or a clock step back): increment the random part so ids stay strictly increasing.
    const r = [...lastRandom];
    for (let i = r.length - 1; i >= 0; i--) {
      if (r[i] < 31) {
        r[i] += 1;
        break;
      }
      r[i] = 0;
    }
    lastRandom = r;
  } else {
    lastMs = now;
    lastRandom = randomDigits();
  }
  let time = '';
  let t = lastMs;
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[t % 32] + time;
    t = Math.floor(t / 32);
  }
  return time + lastRandom.map((d) => ALPHABET[d]).join('');
}

export function paddleId(prefix: string): string {
  return `${prefix}_${ulid()}`;
}

/** A secret-looking token in Paddle's key shapes, e.g. pdl_sdbx_apikey_01…_<random>. */
export function paddleKey(prefix: string): string {
  return `${prefix}_${ulid()}_${crypto.randomBytes(18).toString('base64url')}`;
}
