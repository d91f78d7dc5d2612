import { z } from 'zod';
import { defineOperation } from './types';
import { filter, pageOf, paging, provider } from './schemas';
import { isoReq, paginate, whereGiven } from './paging';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const syncEventRow = z.object({
  id: z.string(),
  object: z.literal('sync_event'),
  run_id: z.string(),
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
    run_id: z.string().regex(UUID_RE, 'run_id must be a uuid').optional(),
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
