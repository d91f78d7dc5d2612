import crypto from 'node:crypto';
import { importPKCS8, importSPKI, SignJWT, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { newRsaKey } from '../../emulators/store_android/keys';

describe('the Play emulator’s service-account keys', () => {
  it('each is its own RSA-2048 key (PKCS#8, e = 65537) that signs what its public half verifies and no other key does', async () => {
    const keys = Array.from({ length: 24 }, () => newRsaKey());
    const moduli = new Set<string>();
    for (const { privatePem, publicPem } of keys) {
      const priv = crypto.createPrivateKey(privatePem);
      expect(privatePem).toMatch(/^-----BEGIN PRIVATE KEY-----/);
      expect(priv.asymmetricKeyDetails).toMatchObject({ modulusLength: 2048, publicExponent: 65537n });
      const pub = crypto.createPublicKey(publicPem);
      expect(pub.export({ format: 'jwk' })).toEqual(crypto.createPublicKey(priv).export({ format: 'jwk' }));
      moduli.add(pub.export({ format: 'jwk' }).n!);
    }
    expect(moduli.size).toBe(keys.length);

    // What the provider does with a key file (jose, RS256), and what the emulator's token endpoint checks.
    const [a, b] = keys;
    const jwt = await new SignJWT({ scope: 'androidpublisher' })
      .setProtectedHeader({ alg: 'RS256' })
      .setIssuer('play-billing-test@example.iam.gserviceaccount.com')
      .sign(await importPKCS8(a!.privatePem, 'RS256'));
    await expect(jwtVerify(jwt, await importSPKI(a!.publicPem, 'RS256'))).resolves.toBeTruthy();
    await expect(jwtVerify(jwt, await importSPKI(b!.publicPem, 'RS256'))).rejects.toThrow(/signature/);
  });
});
