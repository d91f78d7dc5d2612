import { z } from 'zod';
import { appsOfTenant } from '../../db/apps';
import { defineOperation } from '../types';
import { app, appRow } from './schema';

export const listApps = defineOperation({
  name: 'apps.list',
  summary: 'The apps this key reaches',
  scope: 'apps:read',
  write: false,
  input: z.object({}).strict(),
  output: z.object({ data: z.array(appRow) }),
  async handler(ctx) {
    return ctx.tx(async (trx) => ({ data: (await appsOfTenant(trx)).map(app) }));
  },
});
