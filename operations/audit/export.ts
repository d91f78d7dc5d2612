import { z } from 'zod';
import { auditPage } from '../../db/audit';
import { csvLine } from '../../domain/csv';
import { filter, paging } from '../schemas';
import { defineOperation } from '../types';
import { serializeAuditEntry } from './list';

const COLUMNS = ['id', 'created_at', 'action', 'actor_type', 'actor_id', 'key_id', 'request_id', 'outcome', 'detail'];

/** The audit trail as a spreadsheet reads it: the list's page, one row per entry, `detail` as its JSON. */
export const exportAudit = defineOperation({
  name: 'audit.export',
  summary:
    'The audit trail as CSV: the same filters and paging as the list; the Audit-Has-More header says if more follow',
  scope: 'audit:read',
  write: false,
  input: z.object({ ...paging, action: filter.optional(), actor_type: filter.optional() }).strict(),
  output: z.string().describe('text/csv: a header row, then one row per entry, newest first'),
  rest: { method: 'GET', path: '/audit.csv' },
  async handler(ctx, input) {
    const page = await ctx.read((reader) =>
      auditPage(reader, { action: input.action, actor_type: input.actor_type }, input),
    );
    const rows = page.data
      .map(serializeAuditEntry)
      .map((e) => [
        e.id,
        e.created_at,
        e.action,
        e.actor_type,
        e.actor_id,
        e.key_id,
        e.request_id,
        e.outcome,
        e.detail === null ? null : JSON.stringify(e.detail),
      ]);
    const csv = csvLine(COLUMNS) + rows.map(csvLine).join('');
    ctx.response.headers['Content-Type'] = 'text/csv; charset=utf-8';
    ctx.response.headers['Audit-Has-More'] = String(page.pagination.has_more);
    ctx.response.text = csv;
    return csv;
  },
});
