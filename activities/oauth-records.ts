import { deleteExpiredOAuthRecords, deleteUnusedOAuthClients } from '../db/oauth-records';
import type { ActivityDeps } from './deps';

/** The sign-in records' cleanup (workflows/oauth-cleanup.ts): one bounded batch per call. */
export function createOAuthCleanupActivities(deps: ActivityDeps) {
  return {
    async deleteExpiredOAuthRecords(input: { limit: number }): Promise<number> {
      return deleteExpiredOAuthRecords(deps.db, input.limit);
    },
    async deleteUnusedOAuthClients(input: { limit: number }): Promise<number> {
      return deleteUnusedOAuthClients(deps.db, input.limit);
    },
  };
}
