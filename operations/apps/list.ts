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
  tool: {
    name: 'billing_apps',
    title: 'Apps',
    description: 'List the apps this key reaches, with their publishable keys. The first call of an onboarding.',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  async handler(ctx) {
    return ctx.tx(async (trx) => ({ data: (await appsOfTenant(trx)).map(app) }));
  },
});
