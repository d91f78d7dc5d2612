import { z } from 'zod';
import { importById, importOutcomes } from '../../db/imports';
import { notFound } from '../errors';
import { id } from '../schemas';
import { defineOperation } from '../types';
import { importBody, knownImport, MAX_LISTED_REFUSALS, renderImport } from './schema';

export const getImport = defineOperation({
  name: 'imports.get',
  summary: 'One import: its status, how many subscriptions it brought in, and the lines it refused with the reason',
  scope: 'imports:read',
  write: false,
  input: z.object({ id: id('the import') }).strict(),
  output: importBody,
  rest: { method: 'GET', path: '/imports/{id}' },
  fuzzModelled: false,
  errors: [404],
  tool: {
    name: 'billing_import_status',
    title: 'Import Status',
    description:
      'One import: running, succeeded or failed; how many subscriptions it imported; refused lines with the reason.',
    // What the import recorded here; no provider is asked.
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  async handler(ctx, input) {
    return ctx.tx(async (trx) => {
      const row = await importById(trx, knownImport(input.id));
      if (!row) throw notFound('import');
      return renderImport(row, await importOutcomes(trx, row.id, MAX_LISTED_REFUSALS));
    });
  },
});
