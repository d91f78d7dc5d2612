import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';

const { deleteExpiredOAuthRecords, deleteUnusedOAuthClients } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  // Bounded: a batch that keeps failing ends the run; the Schedule's next tick takes up the rest.
  retry: { initialInterval: '5 seconds', maximumInterval: '1 minute', maximumAttempts: 5 },
});

/**
 * Rows per batch and batches per run by default: at most 10,000 records and 10,000 registrations a
 * run, each batch a short statement.
 */
const OAUTH_CLEANUP_BATCH = 500;
const OAUTH_CLEANUP_BATCHES = 20;

interface OAuthCleanupInput {
  /** Rows per batch (1–500; a test passes a few). */
  batch?: number;
  /** Batches per run (1–20). */
  batches?: number;
}

const within = (v: number | undefined, max: number) =>
  typeof v === 'number' && Number.isFinite(v) ? Math.max(1, Math.min(max, Math.floor(v))) : max;

/** Up to `batches` calls of `step`, each of at most `limit` rows, stopping at a short one. */
async function inBatches(step: (input: { limit: number }) => Promise<number>, limit: number, batches: number) {
  let deleted = 0;
  for (let i = 0; i < batches; i++) {
    const n = await step({ limit });
    deleted += n;
    if (n < limit) return { deleted, more: false };
  }
  return { deleted, more: true };
}

/**
 * One tick of the sign-in records' cleanup Schedule (`oauth-cleanup-<task queue>`,
 * docs/assistant-sign-in.md "Expired records"): the authorization server's codes, tokens, grants,
 * sessions and pending sign-ins past their expiry are deleted, then the client registrations no
 * live record names that went unused (a day for one never used, 30 days otherwise), each a
 * bounded batch at a time and a bounded number of batches a run, so one run is short however
 * much piled up since the last; what is left, the next tick takes. Counts only in the history.
 */
export async function oauthCleanupWorkflow(
  input: OAuthCleanupInput = {},
): Promise<{ deleted: number; clients: number; more: boolean }> {
  const limit = within(input.batch, OAUTH_CLEANUP_BATCH);
  const batches = within(input.batches, OAUTH_CLEANUP_BATCHES);
  const expired = await inBatches(deleteExpiredOAuthRecords, limit, batches);
  const clients = await inBatches(deleteUnusedOAuthClients, limit, batches);
  return { deleted: expired.deleted, clients: clients.deleted, more: expired.more || clients.more };
}
