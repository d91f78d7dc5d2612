/**
 * Attempt limits for the dashboard's unauthenticated forms, counted in Postgres
 * by db/login-attempts.ts (`dashboard_login_attempts`), so every replica shares them.
 *
 * - `pair`: wrong passwords for one account from one client address. The real limit on
 *   guessing: an attacker's burst fills their own pair, never the owner's.
 * - `ip`: wrong passwords from one address over all accounts (spraying).
 * - `account`: wrong passwords for one account from everywhere: a larger ceiling with a short
 *   window, so many addresses together are slowed down but the owner waits a minute at most.
 * - `signup`: sign-ups from one address (each runs argon2 and creates a tenant).
 */
export interface Limit {
  max: number;
  windowSeconds: number;
}
export type AttemptKind = 'pair' | 'ip' | 'account' | 'signup';
export type Limits = Record<AttemptKind, Limit>;

export const DEFAULT_LIMITS: Limits = {
  pair: { max: 5, windowSeconds: 15 * 60 },
  ip: { max: 30, windowSeconds: 15 * 60 },
  account: { max: 50, windowSeconds: 60 },
  signup: { max: 10, windowSeconds: 60 * 60 },
};
