import { z } from 'zod';
import { importPage } from '../../db/imports';
import { pageOf, paging, provider } from '../schemas';
import { defineOperation } from '../types';
import { importListRow, importTrigger, renderImportListRow } from './schema';

export const listImports = defineOperation({
  name: 'imports.list',
  summary: 'Imports, newest first: what started each, its status and how many subscriptions it brought in or refused',
  scope: 'imports:read',
  write: false,
  input: z
    .object({
      ...paging,
      provider: provider.optional(),
      trigger: importTrigger.optional(),
    })
    .strict(),
  output: pageOf(importListRow),
  rest: { method: 'GET', path: '/imports' },
  fuzzModelled: false,
  pages: [{ page: '/imports', gates: ['open'] }],
  tool: {
    name: 'billing_imports',
    title: 'Imports',
    description:
      'Imports, newest first: provider, status, trigger (request, or connection_proven: started when a connection proved its account), imported and refused counts (filters: provider, trigger; paged).',
    // What the imports recorded here; no provider is asked.
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  async handler(ctx, input) {
    const page = await ctx.read((reader) =>
      importPage(reader, { provider: input.provider, trigger: input.trigger }, input),
    );
    return { ...page, data: page.data.map(renderImportListRow) };
  },
});
