import { z } from 'zod';
import { firstAppId } from '../../db/apps';
import { ConnectionError } from '../../db/connections';
import { attachToApp } from '../../db/app-providers';
import { isUuid } from '../../domain/ids';
import { ApiError, invalidRequest, notFound } from '../errors';
import { provider } from '../schemas';
import { defineOperation } from '../types';

const CONNECTION_ERRORS: Record<string, [number, string]> = {
  invalid_request: [400, 'invalid_request'],
  app_not_found: [404, 'not_found'],
  not_found: [404, 'not_found'],
  no_connection: [409, 'no_connection'],
  ambiguous_connection: [409, 'ambiguous_connection'],
  inactive: [409, 'connection_inactive'],
};

export const attachProvider = defineOperation({
  name: 'providers.attach',
  summary: "Attach a provider connection the account already holds to an app (never takes a secret)",
  scope: 'providers:write',
  write: true,
  input: z.object({
    provider,
    account_id: z.string().min(1).max(255).optional().describe("the connection's id or the provider's account id; omitted: the account's default connection"),
    app_id: z.string().optional().describe("the app (default: the account's first app)"),
  }).strict(),
  output: z.object({ id: z.string(), app_id: z.string(), provider, connection_id: z.string(), account_ref: z.string(), label: z.string(), created: z.boolean(), replaced: z.boolean() }),
  async handler(ctx, input) {
    return ctx.tx(async (trx) => {
      let appId = input.app_id;
      if (appId === undefined) appId = await firstAppId(trx);
      if (!isUuid(appId)) throw notFound('app');
      try {
        const r = await attachToApp(trx, appId, input.provider, input.account_id);
        return { ...r.attachment, created: r.created, replaced: r.replaced };
      } catch (e) {
        if (!(e instanceof ConnectionError)) throw e;
        const [status, code] = CONNECTION_ERRORS[e.code] ?? [400, 'invalid_request'];
        const candidates = e.candidates?.length ? ` Candidates: ${e.candidates.map((c) => `${c.account_ref} (id ${c.id}${c.label ? `, "${c.label}"` : ''})`).join('; ')}. Pass one as account_id.` : '';
        if (status === 400) throw invalidRequest(e.message, 'account_id');
        throw new ApiError(status, code, `${e.message}.${candidates}`, e.candidates ? { candidates: e.candidates } : {});
      }
    });
  },
});
