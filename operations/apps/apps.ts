import { z } from 'zod';
import { isUuid } from '../../domain/ids';
import { appByName, appsOfTenant, firstAppId, insertAppUnlessNamed } from '../../db/apps';
import { attachToApp, ConnectionError } from '../../db/connections';
import { generatePublishableKey } from '../../db/key-material';
import { ApiError, invalidRequest, notFound } from '../errors';
import { defineOperation } from '../types';
import { provider } from '../schemas';
import type { Row } from '../../db/row';
import { iso } from '../paging';

const appRow = z.object({
  id: z.string(),
  object: z.literal('app'),
  name: z.string(),
  publishable_key_test: z.string().describe('for client apps in test mode (not a management credential)'),
  publishable_key_live: z.string(),
  created_at: z.string().nullable(),
});
const app = (r: Row) => ({ id: r.id, object: 'app' as const, name: r.name, publishable_key_test: r.publishable_key_test, publishable_key_live: r.publishable_key_live, created_at: iso(r.created_at) });

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

export const createApp = defineOperation({
  name: 'apps.create',
  summary: 'Create an app and return its publishable key; an existing app of that name comes back with created: false',
  scope: 'apps:write',
  write: true,
  input: z.object({ name: z.string().trim().min(1).max(200) }).strict(),
  output: appRow.extend({ created: z.boolean() }),
  async handler(ctx, input) {
    return ctx.tx(async (trx) => {
      const existing = await appByName(trx, input.name);
      if (existing) return { ...app(existing), created: false };
      const row = await insertAppUnlessNamed(trx, { tenant_id: ctx.tenantId, name: input.name, publishable_key_test: generatePublishableKey('test'), publishable_key_live: generatePublishableKey('live') });
      // A concurrent create of the same name won: theirs stands, as a re-run would see it.
      if (!row) return { ...app((await appByName(trx, input.name))!), created: false };
      return { ...app(row), created: true };
    });
  },
});

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
