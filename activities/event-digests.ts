import { ensureDigest, tenantsDueADigest } from '../db/event-digests';
import type { ActivityDeps } from './deps';

/** The daily digests (workflows/event-digests.ts): which tenants are due one, and one tenant's. */
export function createEventDigestActivities({ db, vault }: ActivityDeps) {
  return {
    async tenantsDueADigest(input: { day: string; max: number }): Promise<string[]> {
      return tenantsDueADigest(db, input.day, input.max);
    },
    /** Idempotent: a digest already made is left as it is. Answers the count and root (no personal data). */
    async makeEventDigest(input: { tenantId: string; day: string }): Promise<{ events: number; root: string }> {
      const row = await ensureDigest(db, vault, input.tenantId, input.day);
      return { events: Number(row.events), root: row.root as string };
    },
  };
}
