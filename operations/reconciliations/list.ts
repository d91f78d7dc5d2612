import { z } from 'zod';
import { repairPage } from '../../db/reconciliations';
import { isUuid } from '../../domain/ids';
import { invalidRequest } from '../errors';
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
      run_id: z.string().optional().describe('only the repairs of this run'),
      provider: provider.optional(),
    })
    .strict(),
  output: pageOf(repairRow),
  rest: { method: 'GET', path: '/reconciliations' },
  async handler(ctx, input) {
    if (input.run_id !== undefined && !isUuid(input.run_id)) throw invalidRequest('run_id is not a run id.', 'run_id');
    const page = await ctx.read((reader) =>
      repairPage(reader, { run_id: input.run_id, provider: input.provider }, input),
    );
    return { ...page, data: page.data.map(renderRepair) };
  },
});
