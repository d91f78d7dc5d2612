import { z } from 'zod';
import { isUuid } from '../../domain/ids';
import { endpointUrlProblem, OUTBOUND_EVENT_TYPES, ROTATION_OVERLAP_SECONDS } from '../../domain/outbound-events';
import { MAX_ENDPOINTS_PER_TENANT } from '../../domain/outbound-limits';
import { outboundPortProblem } from '../../domain/outbound-ports';
import { deleteEndpoint, endpointById, endpointPage, insertEndpoint, lockedEndpointCount, rotateEndpointSecret, updateEndpoint } from '../../db/outbound-endpoints';
import type { Row } from '../../db/row';
import { baseReadiness } from '../../db/outbound-events';
import { checkLiteralHost } from '../../egress/address-guard';
import { ApiError, invalidRequest, notFound } from '../errors';
import type { OperationContext } from '../types';
import type { Services } from '../services';
import { createVault, type Vault } from '../../vault/vault';
import { defineOperation } from '../types';
import { id, pageOf, paging } from '../schemas';
import { iso, isoReq } from '../paging';

export const eventType = z.enum(OUTBOUND_EVENT_TYPES);

export const endpointRow = z.object({
  id: id(),
  object: z.literal('webhook_endpoint'),
  url: z.string(),
  description: z.string().nullable(),
  event_types: z.array(eventType).describe('the events it receives; empty: every type'),
  enabled: z.boolean(),
  disabled_reason: z.string().nullable().describe('why it receives nothing (a person disabled it, or deliveries failed for the whole retry window)'),
  secret_rotated_at: z.string().nullable(),
  previous_secret_expires_at: z.string().nullable().describe('until then the previous secret signs too (rotation overlap)'),
  created_at: z.string(),
  updated_at: z.string(),
});
const withSecret = endpointRow.extend({ secret: z.string().describe('the signing secret (Standard Webhooks `whsec_…`): shown this once, store it now') });

export const endpoint = (r: Row) => ({
  id: r.id as string,
  object: 'webhook_endpoint' as const,
  url: r.url as string,
  description: (r.description ?? null) as string | null,
  event_types: r.event_types as (typeof OUTBOUND_EVENT_TYPES)[number][],
  enabled: r.enabled as boolean,
  disabled_reason: (r.disabled_reason ?? null) as string | null,
  secret_rotated_at: iso(r.secret_rotated_at),
  previous_secret_expires_at: iso(r.previous_secret_expires_at),
  created_at: isoReq(r.created_at),
  updated_at: isoReq(r.updated_at),
});

const url = z.string().trim().min(1).max(2048).describe('where deliveries are POSTed (http or https)');
const eventTypes = z.array(eventType).max(OUTBOUND_EVENT_TYPES.length).transform((a) => [...new Set(a)]);
const description = z.string().trim().max(500).nullable();

/** A URL we would never fetch is refused when it is saved, not at its first delivery. */
function checkUrl(ctx: OperationContext, raw: string): void {
  const problem = endpointUrlProblem(raw);
  if (problem) throw invalidRequest(problem, 'url');
  const portProblem = outboundPortProblem(new URL(raw), ctx.services.config.outboundWebhooks.allowedPorts);
  if (portProblem) throw invalidRequest(`url: ${portProblem}`, 'url');
  try {
    checkLiteralHost(new URL(raw), ctx.services.config.outboundWebhooks.allowPrivateAddresses);
  } catch (e) {
    throw invalidRequest((e as Error).message, 'url');
  }
}

const derived = new WeakMap<Services, Vault>();
/** The process's vault (api/main.ts gives one); a process given only its MASTER_KEY in the configuration makes it. */
function vaultOf(ctx: OperationContext): Vault {
  const { services } = ctx;
  if (services.vault) return services.vault;
  if (!services.config.masterKey) throw new ApiError(500, 'server_misconfigured', 'Signing secrets need MASTER_KEY on this process.');
  let v = derived.get(services);
  if (!v) derived.set(services, (v = createVault(services.config.masterKey)));
  return v;
}

const idParam = z.object({ id: id('webhook endpoint id (uuid)') });
const known = (v: string) => {
  if (!isUuid(v)) throw notFound('webhook endpoint');
  return v;
};

export const listEndpoints = defineOperation({
  name: 'webhook_endpoints.list',
  summary: 'Outbound webhook endpoints: where entitlement, subscription, sync and readiness events are pushed (signing secrets are never listed)',
  scope: 'webhooks:read',
  write: false,
  input: z.object({ ...paging }).strict(),
  output: pageOf(endpointRow),
  rest: { method: 'GET', path: '/webhook-endpoints' },
  async handler(ctx, input) {
    const page = await ctx.tx((trx) => endpointPage(trx, input));
    return { ...page, data: page.data.map(endpoint) };
  },
});

export const getEndpoint = defineOperation({
  name: 'webhook_endpoints.get',
  summary: 'One outbound webhook endpoint (enabled, and why not)',
  scope: 'webhooks:read',
  write: false,
  input: idParam.strict(),
  output: endpointRow,
  rest: { method: 'GET', path: '/webhook-endpoints/{id}' },
  errors: [404],
  async handler(ctx, input) {
    const row = await ctx.tx((trx) => endpointById(trx, known(input.id)));
    if (!row) throw notFound('webhook endpoint');
    return endpoint(row);
  },
});

export const createEndpoint = defineOperation({
  name: 'webhook_endpoints.create',
  summary: `Add an outbound webhook endpoint (at most ${MAX_ENDPOINTS_PER_TENANT} per tenant: 409 endpoint_limit_reached); the answer carries its signing secret, shown this once`,
  scope: 'webhooks:write',
  write: true,
  input: z.object({ url, event_types: eventTypes.optional(), description: description.optional() }).strict(),
  output: withSecret,
  rest: { method: 'POST', path: '/webhook-endpoints' },
  errors: [409],
  async handler(ctx, input) {
    checkUrl(ctx, input.url);
    const vault = vaultOf(ctx);
    const { row, secret } = await ctx.tx(async (trx) => {
      if ((await lockedEndpointCount(trx, ctx.tenantId)) >= MAX_ENDPOINTS_PER_TENANT) {
        throw new ApiError(409, 'endpoint_limit_reached', `A tenant may have at most ${MAX_ENDPOINTS_PER_TENANT} webhook endpoints; delete one it no longer uses (an endpoint receives every event type unless event_types narrows it).`, { param: 'url', limit: MAX_ENDPOINTS_PER_TENANT });
      }
      const made = await insertEndpoint(trx, vault, {
        tenantId: ctx.tenantId, url: input.url, description: input.description ?? null, eventTypes: input.event_types ?? [], taskQueue: ctx.services.config.taskQueue,
      });
      // readiness.changed is told against what readiness is now.
      await baseReadiness(trx, ctx.tenantId);
      return made;
    });
    return { ...endpoint(row), secret };
  },
});

export const updateEndpointOp = defineOperation({
  name: 'webhook_endpoints.update',
  summary: 'Change an endpoint: its URL, event types, description, or enabled (disabling stops its deliveries; enabling clears the reason)',
  scope: 'webhooks:write',
  write: true,
  input: idParam.extend({ url: url.optional(), event_types: eventTypes.optional(), description: description.optional(), enabled: z.boolean().optional() }).strict(),
  output: endpointRow,
  rest: { method: 'PATCH', path: '/webhook-endpoints/{id}' },
  errors: [404],
  async handler(ctx, input) {
    const row = await ctx.tx(async (trx) => {
      // An unknown endpoint is a 404 whatever the body says; a bad URL for a known one is a 400.
      if (!(await endpointById(trx, known(input.id)))) throw notFound('webhook endpoint');
      if (input.url !== undefined) checkUrl(ctx, input.url);
      return updateEndpoint(trx, input.id, { url: input.url, description: input.description, eventTypes: input.event_types, enabled: input.enabled });
    });
    if (!row) throw notFound('webhook endpoint');
    return endpoint(row);
  },
});

export const deleteEndpointOp = defineOperation({
  name: 'webhook_endpoints.delete',
  summary: 'Remove an endpoint with its deliveries and their log; queued deliveries to it are dropped',
  scope: 'webhooks:write',
  write: true,
  input: idParam.strict(),
  output: z.object({ id: id(), object: z.literal('webhook_endpoint'), deleted: z.literal(true) }),
  rest: { method: 'DELETE', path: '/webhook-endpoints/{id}', noBody: true },
  errors: [404],
  async handler(ctx, input) {
    if (!(await ctx.tx((trx) => deleteEndpoint(trx, known(input.id))))) throw notFound('webhook endpoint');
    return { id: input.id, object: 'webhook_endpoint' as const, deleted: true as const };
  },
});

export const rotateEndpointSecretOp = defineOperation({
  name: 'webhook_endpoints.rotate_secret',
  summary: 'A new signing secret, shown this once; the previous one keeps signing beside it for overlap_seconds (default one day)',
  scope: 'webhooks:write',
  write: true,
  input: idParam.extend({
    overlap_seconds: z.number().int().min(0).max(ROTATION_OVERLAP_SECONDS.max).optional().describe(`0–${ROTATION_OVERLAP_SECONDS.max}, default ${ROTATION_OVERLAP_SECONDS.default}: how long both secrets sign`),
  }).strict(),
  output: withSecret,
  rest: { method: 'POST', path: '/webhook-endpoints/{id}/rotate-secret' },
  errors: [404],
  async handler(ctx, input) {
    const vault = vaultOf(ctx);
    const r = await ctx.tx((trx) => rotateEndpointSecret(trx, vault, known(input.id), input.overlap_seconds ?? ROTATION_OVERLAP_SECONDS.default));
    if (!r) throw notFound('webhook endpoint');
    return { ...endpoint(r.row), secret: r.secret };
  },
});
