/**
 * Attempt limits for the dashboard's unauthenticated forms, counted in Postgres
 * by db/login-attempts.ts (`dashboard_login_attempts`), so every replica shares them.
 * "Address" is the client address's key (domain/client-address-key.ts): an IPv4 address, or a
 * whole IPv6 /64, so the many addresses of one IPv6 subnet are one.
 *
 * - `pair`: wrong passwords for one account from one client address. The real limit on
 *   guessing: an attacker's burst fills their own pair, never the owner's.
 * - `ip`: wrong passwords from one address over all accounts (spraying).
 * - `account`: wrong passwords for one account from everywhere: a larger ceiling with a short
 *   window, so many addresses together are slowed down. It holds back browsers that never
 *   logged in to the account; a known device (below) is not subject to it.
 * - `device`: wrong passwords from a browser holding a device cookie for the account (set at
 *   its last successful log-in, api/dashboard/device-cookie.ts). Such a browser is limited by
 *   this alone, so neither many addresses guessing the account nor a neighbour at the same
 *   address can lock the owner out of their own browser.
 * - `signup`: sign-ups from one address (each runs argon2 and creates a tenant).
 */
export interface Limit {
  max: number;
  windowSeconds: number;
}
export type AttemptKind = 'pair' | 'ip' | 'account' | 'device' | 'signup';
export type Limits = Record<AttemptKind, Limit>;

export const DEFAULT_LIMITS: Limits = {
  pair: { max: 5, windowSeconds: 15 * 60 },
  ip: { max: 30, windowSeconds: 15 * 60 },
  account: { max: 50, windowSeconds: 60 },
  device: { max: 10, windowSeconds: 15 * 60 },
  signup: { max: 10, windowSeconds: 60 * 60 },
};
