import { z } from 'zod';
import { exportFiles, getExport } from '../../db/exports';
import { notFound } from '../errors';
import { id } from '../schemas';
import { defineOperation } from '../types';
import { exportBody, knownExport, renderExport } from './schema';

export const getExportOp = defineOperation({
  name: 'exports.get',
  summary: 'One export: its status and its files (one per table), each with its rows and where to download it',
  scope: 'exports:read',
  write: false,
  input: z.object({ id: id('the export') }).strict(),
  output: exportBody,
  rest: { method: 'GET', path: '/exports/{id}' },
  fuzzModelled: false,
  errors: [404],
  tool: {
    name: 'billing_export_status',
    title: 'Export Status',
    description:
      'One export: running, succeeded or failed; its files, one per table, with rows, size and download URL.',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  async handler(ctx, input) {
    return ctx.tx(async (trx) => {
      const row = await getExport(trx, knownExport(input.id));
      if (!row) throw notFound('export');
      return renderExport(row, await exportFiles(trx, row.id as string), ctx.services.config.publicApiUrl);
    });
  },
});
