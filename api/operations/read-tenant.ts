import { z } from 'zod';
import { subscriberCount } from '../../db/subscriptions';
import { tenantProfile } from '../../db/tenants';
import { defineOperation } from './types';
import { tenantBody } from './schemas';
import { isoReq, iso } from './paging';

export const getTenant = defineOperation({
  name: 'tenant.get',
  summary: 'Tenant metadata: plan, subscriber limit, and the calling key’s own scopes',
  scope: 'tenant:read',
  write: false,
  input: z.object({}).strict(),
  output: tenantBody,
  rest: { method: 'GET', path: '/tenant' },
  async handler(ctx) {
    return ctx.tx(async (trx) => {
      const t = await tenantProfile(trx);
      const n = await subscriberCount(trx);
      return {
        id: t.id,
        object: 'tenant' as const,
        name: t.name,
        plan: t.plan,
        subscriber_limit: t.subscriber_limit,
        subscriber_count: n,
        key: { id: ctx.principal.keyId, name: ctx.principal.keyName, scopes: ctx.principal.scopes, expires_at: iso(ctx.principal.expiresAt) },
        scopes: ctx.principal.scopes,
        created_at: isoReq(t.created_at),
      };
    });
  },
});
