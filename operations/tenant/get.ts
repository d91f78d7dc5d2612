import { z } from 'zod';
import { subscriberCount } from '../../db/subscriptions';
import { tenantProfile } from '../../db/tenants';
import { scopesOf, type Actor } from '../actor';
import { iso, isoReq } from '../paging';
import { timestamp, timestampOrNull, id } from '../schemas';
import { defineOperation } from '../types';
import { SCOPES, type Scope } from '../../domain/scopes';

/** A scope by name: the OpenAPI document and the tool's output schema list the closed set (domain/scopes.ts). */
const scopeName = z.enum(SCOPES as [Scope, ...Scope[]]);

export const tenantBody = z.object({
  id: id(),
  object: z.literal('tenant'),
  name: z.string(),
  plan: z.string(),
  subscriber_limit: z.number().int(),
  subscriber_count: z.number().int(),
  key: z.object({
    id: id(),
    name: z.string(),
    scopes: z.array(scopeName),
    expires_at: timestampOrNull,
  }),
  scopes: z.array(scopeName).describe("the calling key's own scopes"),
  created_at: timestamp,
});

export const getTenant = defineOperation({
  name: 'tenant.get',
  summary: 'Tenant metadata: plan, subscriber limit, and the calling key’s own scopes',
  scope: 'tenant:read',
  write: false,
  input: z.object({}).strict(),
  output: tenantBody,
  rest: { method: 'GET', path: '/tenant' },
  tool: {
    name: 'billing_tenant',
    title: 'Tenant',
    description: 'Plan, limits and the scopes of the key you are using.',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
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
        key: keyOf(ctx.actor),
        scopes: scopesOf(ctx.actor),
        created_at: isoReq(t.created_at),
      };
    });
  },
});

/**
 * The calling key; a person in the dashboard is shown as the dashboard, with their role's scopes;
 * the operator as itself.
 */
function keyOf(actor: Actor) {
  if (actor.kind === 'api_key')
    return { id: actor.keyId, name: actor.keyName, scopes: actor.scopes, expires_at: iso(actor.expiresAt) };
  if (actor.kind === 'operator') return { id: 'operator', name: 'operator', scopes: scopesOf(actor), expires_at: null };
  if (actor.kind === 'assistant')
    return {
      id: `assistant:${actor.assistantId}`,
      name: `assistant ${actor.clientName}`,
      scopes: actor.scopes,
      expires_at: null,
    };
  return { id: `user:${actor.userId}`, name: 'dashboard', scopes: scopesOf(actor), expires_at: null };
}
