/**
 * Entitlement tokens (the service's docs/entitlement-tokens.md): a compact JWS, EdDSA over
 * Ed25519, checked here with the platform's WebCrypto and nothing else. A backend calls
 * `verifyEntitlementToken` with the JWKS URL (`{API host}/.well-known/jwks.json`) or the key set
 * itself and its `aud` (`<tenant_id>:<mode>`).
 */

export interface EntitlementTokenClaims {
  iss: string;
  aud: string;
  sub: string;
  tenant_id: string;
  mode: 'test' | 'live';
  premium: boolean;
  entitlements: { id: string; expires_at: string | null }[];
  /** What the listed entitlements unlock (`premium` unless a product names another), each once. */
  active_entitlements?: string[];
  iat: number;
  exp: number;
}

export interface PublicJwk {
  kty: string;
  crv?: string;
  x?: string;
  kid?: string;
  alg?: string;
}

export interface VerifyTokenOptions {
  /** Where the keys are published; fetched (and kept for `jwksMaxAgeMs`) when `jwks` is not given. */
  jwksUrl?: string;
  jwks?: { keys: PublicJwk[] };
  /** `<tenant_id>:<mode>`: a token for another tenant or side is refused. */
  audience: string;
  /** The API's public URL, when the caller wants `iss` checked too. */
  issuer?: string;
  /** Seconds of clock difference allowed on `exp` and `iat` (default 60). */
  clockToleranceSeconds?: number;
  /** ms since epoch; default Date.now(). */
  now?: number;
  fetch?: typeof fetch;
}

/** Why a token was refused; `unsupported`: this platform's WebCrypto has no Ed25519. */
export type TokenFailure =
  | 'malformed'
  | 'unknown_key'
  | 'bad_signature'
  | 'wrong_audience'
  | 'wrong_issuer'
  | 'expired'
  | 'not_yet_valid'
  | 'unsupported';

export class EntitlementTokenError extends Error {
  constructor(readonly reason: TokenFailure) {
    super(`entitlement token refused: ${reason}`);
    this.name = 'EntitlementTokenError';
  }
}

const TYP = 'entitlements+jwt';
const fromB64url = (s: string): Uint8Array<ArrayBuffer> => {
  const b64 = s.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (s.length % 4)) % 4);
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
};
const json = (s: string): unknown => JSON.parse(new TextDecoder().decode(fromB64url(s)));

const jwksCache = new Map<string, { at: number; set: { keys: PublicJwk[] } }>();
const JWKS_MAX_AGE_MS = 300_000;

async function keySet(opts: VerifyTokenOptions, kid: string): Promise<{ keys: PublicJwk[] }> {
  if (opts.jwks) return opts.jwks;
  if (!opts.jwksUrl) throw new TypeError('verifyEntitlementToken: give jwksUrl or jwks');
  const f = opts.fetch ?? globalThis.fetch.bind(globalThis);
  const cached = jwksCache.get(opts.jwksUrl);
  // An unknown kid refetches: a rotation needs no coordination.
  if (cached && Date.now() - cached.at < JWKS_MAX_AGE_MS && cached.set.keys.some((k) => k.kid === kid))
    return cached.set;
  const res = await f(opts.jwksUrl, { headers: { Accept: 'application/json' } });
  if (!res.ok) throw new EntitlementTokenError('unknown_key');
  const set = (await res.json()) as { keys: PublicJwk[] };
  jwksCache.set(opts.jwksUrl, { at: Date.now(), set });
  return set;
}

/** Whether this platform's WebCrypto verifies Ed25519 (older browsers do not). */
export async function ed25519Available(): Promise<boolean> {
  try {
    const subtle = globalThis.crypto?.subtle;
    if (!subtle) return false;
    await subtle.importKey(
      'jwk',
      { kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo' },
      { name: 'Ed25519' },
      false,
      ['verify'],
    );
    return true;
  } catch {
    return false;
  }
}

/**
 * The token's claims once its signature, `typ`, `aud`, `iss` (when asked) and times check out;
 * else EntitlementTokenError.
 */
export async function verifyEntitlementToken(token: string, opts: VerifyTokenOptions): Promise<EntitlementTokenClaims> {
  const parts = typeof token === 'string' ? token.split('.') : [];
  if (parts.length !== 3) throw new EntitlementTokenError('malformed');
  let header: { alg?: string; kid?: string; typ?: string };
  let claims: EntitlementTokenClaims;
  try {
    header = json(parts[0]) as typeof header;
    claims = json(parts[1]) as EntitlementTokenClaims;
  } catch {
    throw new EntitlementTokenError('malformed');
  }
  if (header.alg !== 'EdDSA' || header.typ !== TYP || typeof header.kid !== 'string')
    throw new EntitlementTokenError('malformed');
  const subtle = globalThis.crypto?.subtle;
  if (!subtle) throw new EntitlementTokenError('unsupported');
  const jwk = (await keySet(opts, header.kid)).keys.find((k) => k.kid === header.kid);
  if (!jwk || jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string')
    throw new EntitlementTokenError('unknown_key');
  let key: CryptoKey;
  try {
    key = await subtle.importKey('jwk', { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, { name: 'Ed25519' }, false, [
      'verify',
    ]);
  } catch {
    throw new EntitlementTokenError('unsupported');
  }
  const ok = await subtle.verify(
    { name: 'Ed25519' },
    key,
    fromB64url(parts[2]),
    new TextEncoder().encode(`${parts[0]}.${parts[1]}`),
  );
  if (!ok) throw new EntitlementTokenError('bad_signature');
  if (claims.aud !== opts.audience) throw new EntitlementTokenError('wrong_audience');
  if (opts.issuer !== undefined && claims.iss !== opts.issuer) throw new EntitlementTokenError('wrong_issuer');
  const now = Math.floor((opts.now ?? Date.now()) / 1000);
  const skew = opts.clockToleranceSeconds ?? 60;
  if (typeof claims.exp !== 'number' || now >= claims.exp + skew) throw new EntitlementTokenError('expired');
  if (typeof claims.iat !== 'number' || claims.iat > now + skew) throw new EntitlementTokenError('not_yet_valid');
  return claims;
}
