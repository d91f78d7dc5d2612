import crypto from 'node:crypto';
import type { EmulatorStore } from '../common/types';

export interface SigningKey {
  kid: string;
  privateKey: crypto.KeyObject;
  jwk: crypto.JsonWebKey;
}

const E = 65537n;

/**
 * The primes this process's keys are made of, drawn as needed. A fresh RSA-2048 key is a search
 * for two 1024-bit primes, about 160 ms of CPU each time; here each new prime is paired with every
 * one drawn before it, so m primes make m(m−1)/2 keys (27 apps with two service accounts each:
 * 11 primes instead of 108). Keys that share a prime can be factored from one another: they guard
 * emulated state only, and what the emulator needs of them holds (each service account's key is its
 * own, 2048 bits, PKCS#8 as Google's key files carry it).
 */
const primes: bigint[] = [];
let keysMade = 0;

function primeAt(i: number): bigint {
  while (primes.length <= i) {
    // OpenSSL sets a generated prime's top two bits, so any two multiply to exactly 2048 bits; e
    // must be prime to p − 1 for the private exponent to exist.
    const p = crypto.generatePrimeSync(1024, { bigint: true });
    if (p >> 1022n === 3n && (p - 1n) % E !== 0n && !primes.includes(p)) primes.push(p);
  }
  return primes[i]!;
}

/** The k-th pair of distinct pool indexes: (1,0), (2,0), (2,1), (3,0), … */
function pairAt(k: number): [number, number] {
  let i = 1;
  while ((i * (i + 1)) / 2 <= k) i++;
  return [i, k - (i * (i - 1)) / 2];
}

function inverse(a: bigint, m: bigint): bigint {
  let [r0, r1, s0, s1] = [a % m, m, 1n, 0n];
  while (r1 !== 0n) {
    const q = r0 / r1;
    [r0, r1, s0, s1] = [r1, r0 - q * r1, s1, s0 - q * s1];
  }
  return ((s0 % m) + m) % m;
}

const b64url = (n: bigint) => {
  const hex = n.toString(16);
  return Buffer.from(hex.length % 2 ? `0${hex}` : hex, 'hex').toString('base64url');
};

/** RSA-2048, as Google's service-account and OIDC keys are; a key no other in this process has. */
export function newRsaKey(): { privatePem: string; publicPem: string } {
  const [i, j] = pairAt(keysMade++);
  const [p, q] = [primeAt(i), primeAt(j)];
  const d = inverse(E, (p - 1n) * (q - 1n));
  const jwk = {
    kty: 'RSA',
    n: b64url(p * q),
    e: b64url(E),
    d: b64url(d),
    p: b64url(p),
    q: b64url(q),
    dp: b64url(d % (p - 1n)),
    dq: b64url(d % (q - 1n)),
    qi: b64url(inverse(q, p)),
  };
  const privateKey = crypto.createPrivateKey({ key: jwk, format: 'jwk' });
  return {
    privatePem: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    publicPem: crypto.createPublicKey(privateKey).export({ type: 'spki', format: 'pem' }) as string,
  };
}

/**
 * The emulator's own secrets, kept in the store (kind `keys`) so tokens it issued and the
 * OIDC key it publishes survive a restart with a state file.
 */
export function emulatorKeys(store: EmulatorStore) {
  let oidc: SigningKey | undefined;
  let wrong: SigningKey | undefined;

  const record = <T extends Record<string, unknown>>(id: string, make: () => T): T => {
    const found = store.find('keys', (k) => k.id === id) as T | undefined;
    return found ?? store.insert('keys', { id, ...make() });
  };

  const load = (privatePem: string, kid: string): SigningKey => {
    const privateKey = crypto.createPrivateKey(privatePem);
    const jwk = crypto.createPublicKey(privateKey).export({ format: 'jwk' });
    return { kid, privateKey, jwk: { ...jwk, alg: 'RS256', use: 'sig', kid } };
  };

  return {
    /** HMAC key for the opaque access tokens /token hands out. */
    accessTokenSecret(): Buffer {
      const r = record('access_token_hmac', () => ({ secret: crypto.randomBytes(32).toString('base64') }));
      return Buffer.from(r.secret as string, 'base64');
    },
    /** The key Pub/Sub push OIDC tokens are signed with; published at /oauth2/v3/certs. */
    oidcKey(): SigningKey {
      if (!oidc) {
        const r = record('oidc_signing_key', () => ({
          kid: crypto.randomBytes(20).toString('hex'),
          private_pem: newRsaKey().privatePem,
        }));
        oidc = load(r.private_pem as string, r.kid as string);
      }
      return oidc;
    },
    /** A key nobody publishes, under the real kid: what a forged push would be signed with. */
    wrongKey(): SigningKey {
      if (!wrong) wrong = load(newRsaKey().privatePem, this.oidcKey().kid);
      return wrong;
    },
  };
}

export type EmulatorKeys = ReturnType<typeof emulatorKeys>;
