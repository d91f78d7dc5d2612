import { z } from 'zod';
import type { ImportRow } from '../../db/imports';
import { isUuid } from '../../domain/ids';
import { notFound } from '../errors';
import { id, timestamp, timestampOrNull } from '../schemas';

/** At most this many refused lines are listed on an import (their count is always given). */
export const MAX_LISTED_REFUSALS = 1000;

export const importStatus = z.enum(['running', 'succeeded', 'failed']);

export const importAccepted = z.object({ id: id('the import'), status: importStatus });

export const importBody = z.object({
  id: id('the import'),
  object: z.literal('import'),
  provider: z.string().describe('the provider imported from, or revenuecat for a RevenueCat export'),
  status: importStatus,
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
    imported: outcomes.imported,
    refused: outcomes.refused,
    refused_count: outcomes.refused_count,
    pages: row.pages,
    failure: row.failure,
    created_at: row.created_at.toISOString(),
    finished_at: row.finished_at?.toISOString() ?? null,
  };
}
