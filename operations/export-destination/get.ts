import { z } from 'zod';
import { getDestination, lastRuns } from '../../db/export-destinations';
import { defineOperation } from '../types';
import { destinationBody, renderDestination } from './schema';

export const getExportDestination = defineOperation({
  name: 'export_destination.get',
  summary:
    'Where scheduled exports go (endpoint, bucket, prefix, format; never the credentials), its status and its last runs',
  scope: 'exports:read',
  write: false,
  input: z.object({}).strict(),
  output: destinationBody,
  rest: { method: 'GET', path: '/settings/exports' },
  fuzzModelled: false,
  pages: [{ page: '/settings/exports', gates: ['open'] }],
  async handler(ctx) {
    return ctx.tx(async (trx) => renderDestination(await getDestination(trx), await lastRuns(trx, 10)));
  },
});
