import { z } from 'zod';
import { defineOperation } from '../types';
import { UUID_RE } from '../../domain/ids';
import { filter, id, pageOf, paging, provider } from '../schemas';
import { isoReq } from '../paging';
import { syncEventPage } from '../../db/sync-runs';

export const syncEventRow = z.object({
  id: id(),
  object: z.literal('sync_event'),
  run_id: id('the sync run'),
  provider,
  status: z.string().describe('succeeded, failed or skipped'),
  reason: z.string().nullable().describe('why it failed or was skipped'),
  detail: z
    .unknown()
    .nullable()
    .describe(
      'outcome (synced, nothing_to_do, failed or skipped), synced, failed and modes: every run records one event per provider it checked, also when it had nothing to do',
    ),
  created_at: z.string(),
});

export const listSyncEvents = defineOperation({
  name: 'sync.events',
  summary: 'Per-provider events of sync runs; rows explain why a provider failed',
  scope: 'products:read',
  write: false,
  input: z
    .object({
      ...paging,
      run_id: z.string().regex(UUID_RE, 'run_id must be a uuid').meta({ format: 'uuid' }).optional(),
      provider: provider.optional(),
      status: filter.optional(),
    })
    .strict(),
  output: pageOf(syncEventRow),
  rest: { method: 'GET', path: '/sync/events' },
  tool: {
    name: 'billing_sync_events',
    title: 'Sync Events',
    description:
      'Per-provider events of a sync run: pass run_id from billing_sync_run (filters: run_id, provider, status; paged).',
    // What a run recorded here; no provider is asked.
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  async handler(ctx, input) {
    const page = await ctx.read((reader) =>
      syncEventPage(reader, { run_id: input.run_id, provider: input.provider, status: input.status }, input),
    );
    return {
      ...page,
      data: page.data.map((r) => ({
        id: r.id,
        object: 'sync_event' as const,
        run_id: r.run_id,
        provider: r.provider,
        status: r.status,
        reason: r.reason ?? null,
        detail: r.detail ?? null,
        created_at: isoReq(r.created_at),
      })),
    };
  },
});
