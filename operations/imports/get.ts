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
  errors: [404],
  async handler(ctx, input) {
    return ctx.tx(async (trx) => {
      const row = await importById(trx, knownImport(input.id));
      if (!row) throw notFound('import');
      return renderImport(row, await importOutcomes(trx, row.id, MAX_LISTED_REFUSALS));
    });
  },
});
