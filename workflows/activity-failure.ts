import { ActivityFailure, ApplicationFailure } from '@temporalio/workflow';

/**
 * How a provider call failed, as activities report it (activities/provider-failures.ts puts it in the failure's
 * details).
 */
export type ProviderErrorClass = 'unreachable' | 'rate_limited' | 'rejected';

/** The error an activity threw, out of the ActivityFailure Temporal wraps it in (anything else as it is). */
export function activityCause(err: unknown): unknown {
  return err instanceof ActivityFailure ? err.cause : err;
}

/** The activity's ApplicationFailure, when that is what it threw. */
export function applicationFailureOf(err: unknown): ApplicationFailure | undefined {
  const cause = activityCause(err);
  return cause instanceof ApplicationFailure ? cause : undefined;
}

/** A failed provider activity's class and reason; a failure that names none counts as unreachable. */
export function providerFailureOf(err: unknown): { error_class: ProviderErrorClass; reason: string } {
  const cause = activityCause(err);
  const d = applicationFailureOf(err)?.details?.[0] as
    { error_class?: ProviderErrorClass; reason?: string } | undefined;
  return {
    error_class: d?.error_class ?? 'unreachable',
    reason: d?.reason ?? String((cause as Error)?.message ?? err),
  };
}

/**
 * A store read that failed past its retries, as a registration answers it: 503, retry (the
 * store's reason named, never its body).
 */
export function storeUnavailable(err: unknown): { ok: false; status: 503; error: 'store_unavailable'; detail: string } {
  const reason = applicationFailureOf(err)?.message ?? 'the store did not answer';
  return {
    ok: false,
    status: 503,
    error: 'store_unavailable',
    detail: `Could not reach the store's server API (${reason}); retry.`,
  };
}
