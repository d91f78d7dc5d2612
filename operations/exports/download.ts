import { Readable } from 'node:stream';
import { z } from 'zod';
import { exportFile, exportFilePart, getExport } from '../../db/exports';
import { withTenant } from '../../db/tenant-tx';
import { ApiError, notFound } from '../errors';
import { filter, id } from '../schemas';
import { defineOperation } from '../types';
import { knownExport } from './schema';

const CONTENT_TYPE: Record<string, string> = {
  parquet: 'application/vnd.apache.parquet',
  csv: 'text/csv; charset=utf-8',
};

/**
 * One file of an export, as stored (docs/exports.md): streamed part by part, each part read in a
 * tenant transaction of its own, so a large file never sits whole in memory.
 */
export const downloadExportFile = defineOperation({
  name: 'exports.download',
  summary: 'One file of an export (Parquet or CSV), as the export wrote it',
  scope: 'exports:read',
  write: false,
  input: z.object({ id: id('the export'), name: filter.describe('the file’s name, as the export lists it') }).strict(),
  output: z.string().describe('the file: application/vnd.apache.parquet or text/csv'),
  rest: { method: 'GET', path: '/exports/{id}/files/{name}' },
  fuzzModelled: false,
  errors: [404, 410],
  async handler(ctx, input) {
    const exportId = knownExport(input.id);
    const file = await ctx.tx(async (trx) => {
      const row = await getExport(trx, exportId);
      if (!row) throw notFound('export');
      const f = await exportFile(trx, exportId, input.name);
      if (!f) throw notFound('file');
      // A customer erased since: the files held the id and were deleted (docs/exports.md, "Erasures").
      if (row.purged_at)
        throw new ApiError(
          410,
          'export_purged',
          'A customer was erased after this export was made, so its files were deleted. Start a new export.',
        );
      return f;
    });
    const { db } = ctx.services;
    const tenantId = ctx.tenantId;
    const parts = Number(file.parts);
    async function* body() {
      for (let part = 0; part < parts; part++) {
        const data = await withTenant(db, tenantId, (trx) => exportFilePart(trx, exportId, input.name, part));
        if (!data) throw new Error(`export file ${input.name}: part ${part} is missing`);
        yield data;
      }
    }
    const ext = String(file.name).split('.').pop() ?? '';
    ctx.response.headers['Content-Type'] = CONTENT_TYPE[ext] ?? 'application/octet-stream';
    ctx.response.headers['Content-Length'] = String(file.bytes);
    ctx.response.headers['Content-Disposition'] = `attachment; filename="${String(file.name).replace(/"/g, '')}"`;
    ctx.response.headers['X-Content-SHA256'] = String(file.sha256);
    ctx.response.stream = Readable.from(body());
    return String(file.name);
  },
});
