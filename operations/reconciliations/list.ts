import { z } from 'zod';
import { repairPage } from '../../db/reconciliations';
import { UUID_RE } from '../../domain/ids';
import { pageOf, paging, provider } from '../schemas';
import { defineOperation } from '../types';
import { renderRepair, repairRow } from './schema';

export const listReconciliations = defineOperation({
  name: 'reconciliations.list',
  summary: 'Repairs: subscriptions whose provider state differed from what the service held, and what was applied',
  scope: 'imports:read',
  write: false,
  input: z
    .object({
      ...paging,
      run_id: z
        .string()
        .regex(UUID_RE, 'run_id must be a uuid')
        .meta({ format: 'uuid' })
        .optional()
        .describe('only the repairs of this run'),
      provider: provider.optional(),
    })
    .strict(),
  output: pageOf(repairRow),
  rest: { method: 'GET', path: '/reconciliations' },
  pages: [{ page: '/reconciliations', gates: ['open'] }],
  tool: {
    name: 'billing_reconciliations',
    title: 'Reconciliations',
    description: 'Repairs: what differed from the provider and what was applied (filters: run_id, provider; paged).',
    // What the repairs recorded here; no provider is asked.
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  async handler(ctx, input) {
    const page = await ctx.read((reader) =>
      repairPage(reader, { run_id: input.run_id, provider: input.provider }, input),
    );
    return { ...page, data: page.data.map(renderRepair) };
  },
});
