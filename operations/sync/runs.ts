import { z } from 'zod';
import { recentRuns } from '../../db/sync-runs';
import { iso, isoReq } from '../paging';
import { id, timestamp, timestampOrNull } from '../schemas';
import { defineOperation } from '../types';

export const syncRunRow = z.object({
  id: id(),
  kind: z.string(),
  status: z.string(),
  requested_by: z.string().nullable(),
  workflow_id: z.string().nullable().describe('what the operator looks up in the workflow engine'),
  created_at: timestamp,
  finished_at: timestampOrNull,
});

/**
 * The last 100 sync runs, newest first: the dashboard's Sync runs page. No REST route and no
 * tool: the API names a run by the `run_id` a sync answers, and reads its outcome per provider
 * with `GET /v1/sync/events`.
 */
export const listSyncRuns = defineOperation({
  name: 'sync.runs',
  summary: 'The last 100 sync runs, newest first (the dashboard’s Sync runs page)',
  scope: 'products:read',
  write: false,
  input: z.object({}).strict(),
  output: z.object({ data: z.array(syncRunRow) }),
  async handler(ctx) {
    const runs = await ctx.read((reader) => recentRuns(reader));
    return {
      data: runs.map((r) => ({
        id: r.id,
        kind: r.kind,
        status: r.status,
        requested_by: r.requested_by ?? null,
        workflow_id: r.workflow_id ?? null,
        created_at: isoReq(r.created_at),
        finished_at: iso(r.finished_at),
      })),
    };
  },
});
