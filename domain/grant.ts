/**
 * Access granted by hand (docs/support.md, "Grants"): a person or a key gives an app user one
 * product until a date, with a reason. A grant is its own source beside paid access: no store or
 * provider event changes it; it ends by its own timer (workflows/grant-expiry.ts) or by a
 * revocation, and never comes back.
 */
export const GRANT_STATES = ['active', 'expired', 'revoked'] as const;
export type GrantState = (typeof GRANT_STATES)[number];

/** The longest grant: ten years. Past that a grant is a product decision, not a support one. */
export const MAX_GRANT_DAYS = 3650;
const DAY_MS = 86_400_000;

export type GrantEnd = { expires_at: string } | { problem: string; param: 'expires_at' | 'duration_days' };

/** When a grant asked for at `now` ends: a date in the future, or a number of whole days from now. */
export function grantEnd(ask: { expires_at?: string; duration_days?: number }, now: string): GrantEnd {
  const nowMs = Date.parse(now);
  if (ask.expires_at !== undefined) {
    const at = Date.parse(ask.expires_at);
    if (Number.isNaN(at)) return { problem: 'expires_at must be an ISO 8601 time', param: 'expires_at' };
    if (at <= nowMs) return { problem: 'expires_at must be in the future', param: 'expires_at' };
    if (at > nowMs + MAX_GRANT_DAYS * DAY_MS)
      return { problem: `a grant lasts ${MAX_GRANT_DAYS} days at most`, param: 'expires_at' };
    return { expires_at: new Date(at).toISOString() };
  }
  const days = ask.duration_days;
  if (days === undefined) return { problem: 'give expires_at or duration_days', param: 'duration_days' };
  if (!Number.isInteger(days) || days < 1 || days > MAX_GRANT_DAYS)
    return { problem: `duration_days must be a whole number from 1 to ${MAX_GRANT_DAYS}`, param: 'duration_days' };
  return { expires_at: new Date(nowMs + days * DAY_MS).toISOString() };
}
