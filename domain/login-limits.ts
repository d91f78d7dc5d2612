/**
 * Attempt limits for the dashboard's unauthenticated forms, counted in Postgres
 * by db/login-attempts.ts (`dashboard_login_attempts`), so every replica shares them.
 * "Address" is the client address's key (domain/client-address-key.ts): an IPv4 address, or a
 * whole IPv6 /64, so the many addresses of one IPv6 subnet are one.
 *
 * - `pair`: wrong passwords for one account from one client address. The real limit on
 *   guessing: an attacker's burst fills their own pair, never the owner's.
 * - `ip`: wrong passwords from one address over all accounts (spraying).
 * - `account`: wrong passwords for one account from everywhere: 20 per 15 minutes, with a growing
 *   back-off (`backoffWindows`), so many addresses together get few guesses. It holds back
 *   browsers that never logged in to the account; a known device (below) is not subject to it,
 *   which is what lets it be strict.
 * - `device`: wrong passwords from a browser holding a device cookie for the account (set at
 *   its last successful log-in, api/dashboard/device-cookie.ts). Such a browser is limited by
 *   this alone, so neither many addresses guessing the account nor a neighbour at the same
 *   address can lock the owner out of their own browser.
 * - `signup`: sign-ups from one address (each runs argon2 and creates a tenant).
 */
export interface Limit {
  max: number;
  windowSeconds: number;
  /**
   * Growing back-off: after each `max` attempts taken since the last correct password, the next
   * window is twice as long, up to this. Absent: every window is `windowSeconds`.
   */
  maxWindowSeconds?: number;
}
export type AttemptKind = 'pair' | 'ip' | 'account' | 'device' | 'signup';
export type Limits = Record<AttemptKind, Limit>;

export const DEFAULT_LIMITS: Limits = {
  pair: { max: 5, windowSeconds: 15 * 60 },
  ip: { max: 30, windowSeconds: 15 * 60 },
  account: { max: 20, windowSeconds: 15 * 60, maxWindowSeconds: 24 * 60 * 60 },
  device: { max: 10, windowSeconds: 15 * 60 },
  signup: { max: 10, windowSeconds: 60 * 60 },
};

/**
 * A limit's window lengths, in seconds, by how many full allowances (`max` attempts each) were
 * taken since the last correct password: the n-th entry is the window opened after n of them,
 * the last one for every allowance after. The account's: 15 min, 30 min, 1 h, 2 h, 4 h, 8 h,
 * 16 h, then 24 h.
 */
export function backoffWindows(l: Limit): number[] {
  const windows = [l.windowSeconds];
  const cap = l.maxWindowSeconds ?? l.windowSeconds;
  while (windows[windows.length - 1] < cap) windows.push(Math.min(cap, windows[windows.length - 1] * 2));
  return windows;
}

/** After this long without a wrong password, an account's back-off starts again from its first window. */
export const STREAK_FORGOTTEN_AFTER_SECONDS = 7 * 24 * 60 * 60;
