import { z } from 'zod';
import { auditPage } from '../../db/audit';
import type { Row } from '../../db/row';
import { isoReq } from '../paging';
import { filter, id, pageOf, paging, timestamp } from '../schemas';
import { defineOperation } from '../types';

export const auditRow = z.object({
  id: id(),
  object: z.literal('audit_entry'),
  action: z.string(),
  actor_type: z.string(),
  actor_id: z.string().nullable(),
  key_id: id().nullable(),
  request_id: z.string().nullable(),
  outcome: z.string(),
  detail: z.unknown().nullable(),
  created_at: timestamp,
});

export function serializeAuditEntry(r: Row) {
  return {
    id: r.id,
    object: 'audit_entry' as const,
    action: r.action,
    actor_type: r.actor_type,
    actor_id: r.actor_id ?? null,
    key_id: r.actor_type === 'api_key' ? (r.actor_id ?? null) : null,
    request_id: r.request_id ?? null,
    outcome: r.outcome,
    detail: r.detail ?? null,
    created_at: isoReq(r.created_at),
  };
}

export const listAudit = defineOperation({
  name: 'audit.list',
  summary: 'The audit trail; actions through this API carry actor_type api_key and the key id',
  scope: 'audit:read',
  write: false,
  input: z.object({ ...paging, action: filter.optional(), actor_type: filter.optional() }).strict(),
  output: pageOf(auditRow),
  rest: { method: 'GET', path: '/audit' },
  pages: [{ page: '/audit', gates: ['open'] }],
  tool: {
    name: 'billing_audit',
    title: 'Audit',
    description: 'Audit trail (filters: action, actor_type; paged).',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  async handler(ctx, input) {
    return ctx.read(async (reader) => {
      const page = await auditPage(reader, { action: input.action, actor_type: input.actor_type }, input);
      return { ...page, data: page.data.map(serializeAuditEntry) };
    });
  },
});
