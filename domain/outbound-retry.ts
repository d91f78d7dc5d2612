/**
 * When a failed outbound delivery is tried again, and when it stops: exponential back-off from
 * `firstRetryMs`, doubling, capped at two hours, inside a retry window counted from the
 * delivery's first attempt (or its replay). Three days of window make 46 attempts.
 */
export interface OutboundRetryPolicy {
  attemptTimeoutMs: number;
  firstRetryMs: number;
  retryWindowMs: number;
  /**
   * The first pause between tries of a failing drain activity (doubling, DRAIN_TRIES tries;
   * workflows/outbound-delivery.ts). Absent (runs started before it existed): 1 s.
   */
  drainRetryMs?: number;
}

export const MAX_RETRY_INTERVAL_MS = 2 * 3_600_000;

/**
 * One drain call (activities/outbound-delivery.ts) stops starting rounds after this and hands
 * back to its workflow, which sets the call's timeout from it (workflows/outbound-delivery.ts).
 */
export const DRAIN_BUDGET_MS = 20_000;

export type RetryDecision = { retryAtMs: number } | { giveUp: string };

/** After the `attempts`-th failed attempt (1-based) at `nowMs`, of a window that opened at `windowStartMs`. */
export function afterFailedAttempt(
  policy: OutboundRetryPolicy,
  attempts: number,
  windowStartMs: number,
  nowMs: number,
): RetryDecision {
  const interval = Math.min(
    policy.firstRetryMs * 2 ** Math.max(0, attempts - 1),
    Math.max(policy.firstRetryMs, MAX_RETRY_INTERVAL_MS),
  );
  const retryAtMs = nowMs + interval;
  if (retryAtMs > windowStartMs + policy.retryWindowMs)
    return { giveUp: `no 2xx within the retry window (${windowText(policy.retryWindowMs)})` };
  return { retryAtMs };
}

/** The retry window as people write it: `72 h`, `15 min`, `8 s`. */
export function windowText(ms: number): string {
  if (ms >= 3_600_000) return `${Math.round(ms / 3_600_000)} h`;
  if (ms >= 60_000) return `${Math.round(ms / 60_000)} min`;
  return `${Math.round(ms / 1_000)} s`;
}
