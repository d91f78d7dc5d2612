import crypto from 'node:crypto';
import type { EmulatorStore } from '../common/types';

export interface SigningKey {
  kid: string;
  privateKey: crypto.KeyObject;
  jwk: crypto.JsonWebKey;
}

const RSA = {
  modulusLength: 2048,
  publicKeyEncoding: { type: 'spki', format: 'pem' },
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
} as const;

/** RSA-2048, as Google's service-account and OIDC keys are. */
export function newRsaKey(): { privatePem: string; publicPem: string } {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', RSA);
  return { privatePem: privateKey, publicPem: publicKey };
}

/** Same, off the event loop (key generation takes tens of milliseconds). */
export function newRsaKeyAsync(): Promise<{ privatePem: string; publicPem: string }> {
  return new Promise((resolve, reject) =>
    crypto.generateKeyPair('rsa', RSA, (err, publicKey, privateKey) =>
      err ? reject(err) : resolve({ privatePem: privateKey, publicPem: publicKey }),
    ),
  );
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
