import { createRemoteJWKSet, jwtVerify } from 'jose';

/**
 * Verifying an entitlement token in a Node backend with `jose` (docs/entitlement-tokens.md).
 * Make one verifier per process: it fetches the published keys once, keeps them, and fetches
 * again when a token names a key it has not seen (a rotation needs nothing from you).
 *
 *   const check = entitlementVerifier('https://billing.example.com', '<tenant_id>:live');
 *   const { premium, sub } = await check(req.headers['x-entitlement-token']);  // throws when refused
 */
export function entitlementVerifier(apiUrl: string, audience: string) {
  const jwks = createRemoteJWKSet(new URL(`${apiUrl}/.well-known/jwks.json`));
  return async (token: string, now = new Date()) => {
    const { payload } = await jwtVerify(token, jwks, {
      issuer: apiUrl, // the service's public URL, exactly as its tokens name it
      audience, // `<tenant_id>:<mode>`: another app's tokens, or test mode's, are refused
      algorithms: ['EdDSA'],
      typ: 'entitlements+jwt',
      clockTolerance: 60, // seconds your clock and the service's may differ
      currentDate: now,
    });
    return payload as { sub: string; premium: boolean; entitlements: { id: string; expires_at: string | null }[] };
  };
}
