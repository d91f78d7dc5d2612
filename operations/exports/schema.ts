import { z } from 'zod';
import type { Row } from '../../db/row';
import { EXPORT_FORMATS, EXPORT_SCHEMA_VERSION, EXPORT_STATUSES } from '../../domain/export-schema';
import { isUuid } from '../../domain/ids';
import { notFound } from '../errors';
import { iso, isoReq } from '../paging';
import { id, timestamp, timestampOrNull } from '../schemas';

export const exportStatus = z.enum(EXPORT_STATUSES);
export const exportAccepted = z.object({ id: id('the export'), status: exportStatus });

export const exportFileBody = z.object({
  name: z.string().describe('`<table>.v<schema version>.<format>`'),
  table: z.string(),
  url: z.string().describe('where to download it: this API, with the same secret key (scope exports:read)'),
  rows: z.number().int(),
  bytes: z.number().int(),
  sha256: z.string().describe('hex SHA-256 of the file'),
});

export const exportBody = z.object({
  id: id('the export'),
  object: z.literal('export'),
  status: exportStatus,
  format: z.enum(EXPORT_FORMATS),
  since: timestampOrNull.describe('only rows changed since then (null: everything)'),
  schema_version: z.number().int().describe('the version of the tables’ schema (docs: exports)'),
  files: z.array(exportFileBody).describe('one per table, as each is written'),
  failure: z.string().nullable().describe('why a failed export stopped'),
  created_at: timestamp,
  finished_at: timestampOrNull,
  purged_at: timestampOrNull.describe(
    'when a customer’s erasure deleted the files (they held the erased id): start a new export',
  ),
});

export const knownExport = (v: string) => {
  if (!isUuid(v)) throw notFound('export');
  return v;
};

export function fileUrl(publicApiUrl: string, exportId: string, name: string): string {
  return `${publicApiUrl}/v1/exports/${exportId}/files/${encodeURIComponent(name)}`;
}

export function renderExport(row: Row, files: Row[], publicApiUrl: string): z.infer<typeof exportBody> {
  return {
    id: row.id as string,
    object: 'export',
    status: row.status as z.infer<typeof exportStatus>,
    format: row.format as z.infer<typeof exportBody>['format'],
    since: iso(row.since),
    schema_version: EXPORT_SCHEMA_VERSION,
    files: files.map((f) => ({
      name: f.name as string,
      table: f.table_name as string,
      url: fileUrl(publicApiUrl, row.id as string, f.name as string),
      rows: Number(f.rows),
      bytes: Number(f.bytes),
      sha256: f.sha256 as string,
    })),
    failure: (row.error as string | null) ?? null,
    created_at: isoReq(row.created_at),
    finished_at: iso(row.finished_at),
    purged_at: iso(row.purged_at),
  };
}
