import { z } from 'zod';
import { firstAppId } from '../../db/apps';
import { ConnectionError } from '../../db/connections';
import { attachToApp } from '../../db/app-providers';
import { isUuid } from '../../domain/ids';
import { connectionApiError, notFound } from '../errors';
import { provider } from '../schemas';
import { defineOperation } from '../types';

export const attachProvider = defineOperation({
  name: 'providers.attach',
  summary: 'Attach a provider connection the account already holds to an app (never takes a secret)',
  scope: 'providers:write',
  write: true,
  input: z
    .object({
      provider,
      account_id: z
        .string()
        .min(1)
        .max(255)
        .optional()
        .describe("the connection's id or the provider's account id; omitted: the account's default connection"),
      app_id: z.string().optional().describe("the app (default: the account's first app)"),
    })
    .strict(),
  output: z.object({
    id: z.string(),
    app_id: z.string(),
    provider,
    connection_id: z.string(),
    account_ref: z.string(),
    label: z.string(),
    created: z.boolean(),
    replaced: z.boolean(),
  }),
  tool: {
    name: 'billing_attach_provider',
    title: 'Attach Provider',
    description:
      'Attach a provider the account already connected (once per provider). Takes account_id, never a secret; omitted, the default connection is used; several and no default → refused with the candidates.',
    // Links a stored connection to an app; the provider is not contacted.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  async handler(ctx, input) {
    return ctx.tx(async (trx) => {
      let appId = input.app_id;
      if (appId === undefined) appId = await firstAppId(trx);
      if (!isUuid(appId)) throw notFound('app');
      try {
        const r = await attachToApp(trx, appId, input.provider, input.account_id);
        return { ...r.attachment, created: r.created, replaced: r.replaced };
      } catch (e) {
        // A refusal about the connection chosen names account_id, the input that chooses it.
        throw (e instanceof ConnectionError && connectionApiError(e, 'account_id')) || e;
      }
    });
  },
});
