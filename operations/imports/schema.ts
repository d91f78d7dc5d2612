import { z } from 'zod';
import type { ImportRow } from '../../db/imports';
import { isUuid } from '../../domain/ids';
import { notFound } from '../errors';
import { id, timestamp, timestampOrNull } from '../schemas';

/** At most this many refused lines are listed on an import (their count is always given). */
export const MAX_LISTED_REFUSALS = 1000;

export const importStatus = z.enum(['running', 'succeeded', 'failed']);

export const importTrigger = z
  .enum(['request', 'connection_proven'])
  .describe('request: REST, a tool or the dashboard; connection_proven: a web provider connection proved its account');

export const importAccepted = z.object({ id: id('the import'), status: importStatus });

export const importBody = z.object({
  id: id('the import'),
  object: z.literal('import'),
  provider: z.string().describe('the provider imported from, or revenuecat for a RevenueCat export'),
  status: importStatus,
  trigger: importTrigger,
  imported: z.number().int().describe('subscriptions brought in so far'),
  refused: z
    .array(z.object({ line: z.number().int(), reason: z.string() }))
    .describe(`lines (or listed subscriptions) refused, with the reason; the first ${MAX_LISTED_REFUSALS}`),
  refused_count: z.number().int(),
  pages: z.number().int().describe('pages read so far (provider pages, or batches of file lines)'),
  failure: z.string().nullable().describe('why a failed import stopped'),
  created_at: timestamp,
  finished_at: timestampOrNull,
});

export const knownImport = (v: string) => {
  if (!isUuid(v)) throw notFound('import');
  return v;
};

export function renderImport(
  row: ImportRow,
  outcomes: { imported: number; refused_count: number; refused: { line: number; reason: string }[] },
): z.infer<typeof importBody> {
  return {
    id: row.id,
    object: 'import',
    provider: row.provider ?? 'revenuecat',
    status: row.status,
    trigger: row.trigger,
    imported: outcomes.imported,
    refused: outcomes.refused,
    refused_count: outcomes.refused_count,
    pages: row.pages,
    failure: row.failure,
    created_at: row.created_at.toISOString(),
    finished_at: row.finished_at?.toISOString() ?? null,
  };
}

/** One import in the list: its counts, not its refusals (GET /imports/{id} lists those). */
export const importListRow = importBody.omit({ refused: true });

const isoOf = (v: unknown): string | null => (v == null ? null : v instanceof Date ? v.toISOString() : String(v));

export function renderImportListRow(r: Record<string, unknown>): z.infer<typeof importListRow> {
  return {
    id: String(r.id),
    object: 'import',
    provider: (r.provider as string | null) ?? 'revenuecat',
    status: r.status as z.infer<typeof importStatus>,
    trigger: r.trigger as z.infer<typeof importTrigger>,
    imported: Number(r.imported),
    refused_count: Number(r.refused_count),
    pages: Number(r.pages),
    failure: (r.failure as string | null) ?? null,
    created_at: isoOf(r.created_at)!,
    finished_at: isoOf(r.finished_at),
  };
}
