import { isPremiumState } from './entitlement';
import { TOKEN_MAX_LIFETIME_MS } from './signing-keys';

/**
 * The claims of an entitlement token (docs/entitlement-tokens.md): what the premium check
 * answers, signed so a backend checks it offline. `exp` is at most 24 h after `iat` and never
 * after the moment the access it states ends (grace included), so a token never outlives what
 * was paid or granted; with nothing ending sooner it is the full 24 h.
 */
export const ENTITLEMENT_TOKEN_TYP = 'entitlements+jwt';

/**
 * An entitlement still active after its stated end (a renewal the service has not heard of yet)
 * is vouched for this long at a time: the state says premium, the date says nothing more.
 */
export const LAPSED_END_SECONDS = 60;

export interface TokenEntitlementFacts {
  id: string;
  /** What the entitlement unlocks (`premium` unless the product names another). */
  identifier: string;
  state: string;
  /** ISO times as the premium check reads them. */
  expires_at: string | null;
  grace_until: string | null;
}

export interface EntitlementTokenClaims {
  iss: string;
  aud: string;
  sub: string;
  tenant_id: string;
  mode: 'test' | 'live';
  premium: boolean;
  entitlements: { id: string; expires_at: string | null }[];
  /**
   * The identifiers the listed entitlements unlock, each once, sorted: a plain list of strings,
   * which is what a gateway's stock group or scope check matches (oauth2-proxy's allowed groups).
   */
  active_entitlements: string[];
  iat: number;
  exp: number;
}

/** `aud`: which tenant and which side, so a gateway's stock JWT filter tells tenants, and test from live, apart. */
export const tokenAudience = (tenantId: string, mode: 'test' | 'live') => `${tenantId}:${mode}`;

/** When an entitlement's access ends, grace included; null: no end (a lifetime grant). */
export function accessEnd(e: TokenEntitlementFacts): string | null {
  return e.state === 'grace_period' ? (e.grace_until ?? e.expires_at) : e.expires_at;
}

export function entitlementTokenClaims(input: {
  issuer: string;
  tenantId: string;
  mode: 'test' | 'live';
  appUserId: string;
  entitlements: readonly TokenEntitlementFacts[];
  now: Date;
}): EntitlementTokenClaims {
  const iat = Math.floor(input.now.getTime() / 1000);
  let exp = iat + TOKEN_MAX_LIFETIME_MS / 1000;
  const listed: EntitlementTokenClaims['entitlements'] = [];
  const unlocked = new Set<string>();
  for (const e of input.entitlements) {
    if (!isPremiumState(e.state)) continue;
    unlocked.add(e.identifier);
    const end = accessEnd(e);
    let endS = end === null ? null : Math.floor(Date.parse(end) / 1000);
    if (endS !== null && endS <= iat) endS = iat + LAPSED_END_SECONDS;
    if (endS !== null) exp = Math.min(exp, endS);
    listed.push({ id: e.id, expires_at: endS === null ? null : new Date(endS * 1000).toISOString() });
  }
  return {
    iss: input.issuer,
    aud: tokenAudience(input.tenantId, input.mode),
    sub: input.appUserId,
    tenant_id: input.tenantId,
    mode: input.mode,
    premium: listed.length > 0,
    entitlements: listed,
    active_entitlements: [...unlocked].sort(),
    iat,
    exp,
  };
}
