import { z } from 'zod';
import { defineOperation } from './types';
import { filter, id, pageOf, paging, provider, UUID_RE } from './schemas';
import { isoReq, paginate, whereGiven } from './paging';

export const syncEventRow = z.object({
  id: id(),
  object: z.literal('sync_event'),
  run_id: id('the sync run'),
  provider,
  status: z.string(),
  reason: z.string().nullable(),
  detail: z.unknown().nullable(),
  created_at: z.string(),
});

export const listSyncEvents = defineOperation({
  name: 'sync.events',
  summary: 'Per-provider events of sync runs; rows explain why a provider failed',
  scope: 'products:read',
  write: false,
  input: z.object({
    ...paging,
    run_id: z.string().regex(UUID_RE, 'run_id must be a uuid').meta({ format: 'uuid' }).optional(),
    provider: provider.optional(),
    status: filter.optional(),
  }).strict(),
  output: pageOf(syncEventRow),
  rest: { method: 'GET', path: '/sync/events' },
  tool: { name: 'billing_sync_events', description: 'Per-provider events of a sync run: pass run_id from billing_sync_run (filters: run_id, provider, status; paged).' },
  async handler(ctx, input) {
    return ctx.tx((trx) =>
      paginate(
        whereGiven(trx('sync_events'), 'sync_events', { run_id: input.run_id, provider: input.provider, status: input.status }),
        { ...input, table: 'sync_events' },
        (r: any) => ({
          id: r.id,
          object: 'sync_event' as const,
          run_id: r.run_id,
          provider: r.provider,
          status: r.status,
          reason: r.reason ?? null,
          detail: r.detail ?? null,
          created_at: isoReq(r.created_at),
        }),
      ),
    );
  },
});
