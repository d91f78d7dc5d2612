import { z } from 'zod';
import { appByName, insertAppUnlessNamed } from '../../db/apps';
import { generatePublishableKey } from '../../db/key-material';
import { defineOperation } from '../types';
import { appRow, app } from './schema';

export const createApp = defineOperation({
  name: 'apps.create',
  summary: 'Create an app and return its publishable key; an existing app of that name comes back with created: false',
  scope: 'apps:write',
  write: true,
  input: z.object({ name: z.string().trim().min(1).max(200) }).strict(),
  output: appRow.extend({ created: z.boolean() }),
  tool: {
    name: 'billing_create_app',
    title: 'Create App',
    description:
      'Create an app (by name) and get its publishable key. Re-running with the same name returns the same app with created: false.',
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  async handler(ctx, input) {
    return ctx.tx(async (trx) => {
      const existing = await appByName(trx, input.name);
      if (existing) return { ...app(existing), created: false };
      const row = await insertAppUnlessNamed(trx, {
        tenant_id: ctx.tenantId,
        name: input.name,
        publishable_key_test: generatePublishableKey('test'),
        publishable_key_live: generatePublishableKey('live'),
      });
      // A concurrent create of the same name won: theirs stands, as a re-run would see it.
      if (!row) return { ...app((await appByName(trx, input.name))!), created: false };
      return { ...app(row), created: true };
    });
  },
});
