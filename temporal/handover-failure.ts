import { isGrpcServiceError, ServiceError } from '@temporalio/client';

/**
 * What a failed hand-over from an outbox to Temporal means for its rows, the same for both
 * outboxes: the inbound dispatcher's (api/webhooks/dispatcher.ts, provider webhooks to their
 * customers' workflows) and the outbound one's (temporal/outbound-dispatcher.ts, events to their
 * endpoints' delivery workflows). Their loops differ (the inbound one is kicked by each receipt
 * and waits for a checkout's events to settle; the outbound one polls and takes tenants in
 * turns); the rule for a failure is one.
 */

/** Refusals a row may meet before its deliveries are `failed`; with the back-off below that is about half an hour. */
export const MAX_HANDOVER_REFUSALS = 8;
/** The pause after the n-th refusal. */
export const refusalBackoffMs = (attempts: number) => Math.min(1000 * 2 ** attempts, 10 * 60_000);
/** Temporal away (unreachable, overloaded, too slow): every row waits the same short while, and no attempt is spent. */
export const UNAVAILABLE_RETRY_MS = 2000;

/**
 * gRPC codes that say the request itself is wrong (it would fail the same way again); anything
 * else (unavailable, deadline, overload) says Temporal is away and costs the row no attempt.
 */
const REFUSED_CODES = new Set([
  3 /* INVALID_ARGUMENT */, 6 /* ALREADY_EXISTS */, 9 /* FAILED_PRECONDITION */, 11 /* OUT_OF_RANGE */,
]);

export function isRefusal(err: unknown): boolean {
  const cause = err instanceof ServiceError ? err.cause : err;
  if (isGrpcServiceError(cause)) return REFUSED_CODES.has(cause.code);
  // Not from the server: our own timeout is Temporal being slow; anything else (encoding, a bad row) is the row's.
  return !(err instanceof ServiceError) && !(err instanceof Error && err.name === 'TimeoutError');
}

/** What Temporal said, not the client's wrapper ("Failed to signalWithStart Workflow"). */
export function reasonOf(err: unknown): string {
  const cause = err instanceof ServiceError ? err.cause : undefined;
  if (isGrpcServiceError(cause)) return `${err instanceof Error ? err.message : ''}: ${cause.details || cause.message}`;
  return err instanceof Error ? err.message : String(err);
}
